package enrich

import (
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// TestAPIEquivalent: a raw call to the Docker Engine API is the docker
// command that makes it; other calls are none.
func TestAPIEquivalent(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{`curl --unix-socket /var/run/docker.sock -X POST http://localhost/containers/create -d '{"Image":"alpine","HostConfig":{"Binds":["/:/host"],"Privileged":true}}'`,
			`docker run --privileged -v '/:/host' 'alpine'`},
		{`curl -s --unix-socket /run/podman/podman.sock http://d/v1.41/containers/create --data '{"Image":"x","HostConfig":{"PidMode":"host"}}'`,
			`docker run --pid 'host' 'x'`},
		{`curl --unix-socket /var/run/docker.sock -X POST http://localhost/containers/web/exec -d '{"Cmd":["sh","-c","id"]}'`,
			`docker exec 'web' 'sh' '-c' 'id'`},
		{`curl -X DELETE http://10.0.0.5:2375/containers/db`, `docker rm -f 'db'`},
		{`curl --unix-socket /var/run/docker.sock http://localhost/containers/json`, ``},
		{`curl -X POST https://api.example.com/containers/create -d '{}'`, ``},
		{`wget http://localhost/containers/create`, ``},
	}
	for _, tt := range tests {
		a := shell.Analyze(tt.cmd, shell.DefaultLimits)
		if got := apiEquivalent(&a.Commands[0]); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.cmd, got, tt.want)
		}
	}
}
