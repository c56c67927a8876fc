package enrich

import (
	"slices"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

func TestDescribeCall(t *testing.T) {
	t.Parallel()
	shell := func(cmd string) map[string]any {
		ev := testkit.ToolEvent(map[string]any{"name": "Bash", "input": map[string]any{"command": cmd}})
		ev["session"] = map[string]any{"id": "s", "cwd": "/repo", "workspaceRoots": []any{"/repo"}}
		return ev
	}
	tests := []struct {
		name   string
		event  map[string]any
		family string
		reads  []string
		hosts  []string
		secret bool
		writes []string
	}{
		{"cat .env", shell("cat .env"), "shell", []string{"/repo/.env"}, nil, true, nil},
		{"example env is not secret", shell("cat .env.example"), "shell", []string{"/repo/.env.example"}, nil, false, nil},
		{"input redirection", shell("wc -l < notes.txt"), "shell", []string{"/repo/notes.txt"}, nil, false, nil},
		{"writer is not a read", shell("touch .env"), "shell", nil, nil, false, nil},
		{"private key", shell("cp /home/u/.ssh/id_ed25519 /tmp/k"), "shell", []string{"/home/u/.ssh/id_ed25519"}, nil, true, []string{"/tmp/k"}},
		{"curl host", shell("curl -s https://Example.COM/x | jq .a"), "shell", nil, []string{"example.com"}, false, nil},
		{"file tool", testkit.ToolEvent(map[string]any{"name": "Read", "input": map[string]any{"file_path": "/repo/.env.local"}}), "file_read", []string{"/repo/.env.local"}, nil, true, nil},
		{"fetch tool", testkit.ToolEvent(map[string]any{"name": "WebFetch", "input": map[string]any{"url": "https://docs.example.org/a"}}), "fetch", nil, []string{"docs.example.org"}, false, nil},
		{"redirect writes", shell("printf 'all:\\n\\tx\\n' > Makefile && echo y >> scripts/b.sh"), "shell", nil, nil, false, []string{"/repo/Makefile", "/repo/scripts/b.sh"}},
		{"copy writes its destination", shell("cp /tmp/x.sh scripts/run.sh"), "shell", []string{"/tmp/x.sh"}, nil, false, []string{"/repo/scripts/run.sh"}},
		{"tee writes", shell("echo x | tee -a build.sh"), "shell", nil, nil, false, []string{"/repo/build.sh"}},
		{"write tool", testkit.ToolEvent(map[string]any{"name": "Write", "input": map[string]any{"file_path": "/repo/gradlew", "content": "x"}}), "file_write", nil, nil, false, []string{"/repo/gradlew"}},
		// Text written to run later reads nothing now.
		{"written to run later", shell("echo 'cp ~/.ssh/id_rsa /tmp/k' >> /home/u/.bashrc"), "shell", nil, nil, false, []string{"/home/u/.bashrc"}},
		{"file tool writing later text", testkit.ToolEvent(map[string]any{"name": "Write", "input": map[string]any{"file_path": "/home/u/.bashrc", "content": "cat ~/.aws/credentials\n"}}), "file_write", nil, nil, false, []string{"/home/u/.bashrc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := eventOf(t, tt.event)
			c := DescribeCall(FullInput(ev, Options{Home: "/home/u"}))
			if alone := DescribeEvent(ev); alone.Family != c.Family || !slices.Equal(alone.Reads, c.Reads) {
				t.Errorf("DescribeEvent = %+v, DescribeCall = %+v", alone, c)
			}
			if c.Family != tt.family || !slices.Equal(c.Reads, tt.reads) || !slices.Equal(c.Hosts, tt.hosts) || c.Secret != tt.secret || !slices.Equal(c.Writes, tt.writes) {
				t.Errorf("DescribeCall = %+v, want family %s reads %v hosts %v secret %v writes %v", c, tt.family, tt.reads, tt.hosts, tt.secret, tt.writes)
			}
		})
	}
}
