package enrich

import (
	"encoding/json"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// The same act through an API: a raw HTTP call to a service's admin API
// is the CLI command that makes the same call. The command is spliced
// into the analysis, reached via shell.ViaAPI, so that every rule about
// the CLI judges it (POST /containers/create with a bind of / is docker
// run -v /:/host).

// engineSockets are the Unix sockets of container engines' APIs.
var engineSockets = map[string]bool{"docker.sock": true, "podman.sock": true, "containerd.sock": true}

// engineVersion is the version prefix of an Engine API path (/v1.43/…).
var engineVersion = regexp.MustCompile(`^/v[0-9.]+/`)

// httpCall is what a curl-like command asks of a server.
type httpCall struct {
	method, socket, body string
	u                    *url.URL
}

// httpCallOf reads the method, Unix socket, URL and body of a curl
// command; ok is false for any other program or a call without a URL.
func httpCallOf(c *shell.Command) (hc httpCall, ok bool) {
	if c.Name != "curl" {
		return hc, false
	}
	args := c.Args()
	for j := 0; j < len(args); j++ {
		a := args[j]
		val := func() string {
			if j+1 < len(args) {
				j++
				return args[j]
			}
			return ""
		}
		switch {
		case a == "-X" || a == "--request":
			hc.method = strings.ToUpper(val())
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			hc.method = strings.ToUpper(a[2:])
		case a == "--unix-socket" || a == "--abstract-unix-socket":
			hc.socket = val()
		case a == "-d" || a == "--data" || a == "--data-raw" || a == "--data-binary" || a == "--json":
			hc.body = val()
		case a == "-H" || a == "--header" || a == "-o" || a == "--output" || a == "-u" || a == "--user":
			val()
		case strings.Contains(a, "://") || hc.socket != "" && strings.HasPrefix(a, "/"):
			if u, err := url.Parse(a); err == nil {
				hc.u = u
			}
		}
	}
	if hc.method == "" {
		hc.method = "GET"
		if hc.body != "" {
			hc.method = "POST"
		}
	}
	return hc, hc.u != nil
}

// apiEquivalent returns the CLI command that makes the same call as c,
// "" when c is no call to an API known here.
func apiEquivalent(c *shell.Command) string {
	hc, ok := httpCallOf(c)
	if !ok {
		return ""
	}
	if engineSockets[path.Base(hc.socket)] || hc.u.Port() == "2375" || hc.u.Port() == "2376" {
		return engineEquivalent(hc)
	}
	return ""
}

// engineEquivalent is the docker command for a Docker Engine API call.
func engineEquivalent(hc httpCall) string {
	p := engineVersion.ReplaceAllString(hc.u.Path, "/")
	parts := strings.Split(strings.Trim(p, "/"), "/")
	q := hc.u.Query()
	switch {
	case hc.method == "POST" && p == "/containers/create":
		return "docker run " + containerSpec(hc.body)
	case hc.method == "POST" && len(parts) == 3 && parts[0] == "containers" && parts[2] == "exec":
		var spec struct {
			Cmd        []string
			Privileged bool
			User       string
		}
		_ = json.Unmarshal([]byte(hc.body), &spec)
		line := "docker exec"
		if spec.Privileged {
			line += " --privileged"
		}
		if spec.User != "" {
			line += " -u " + shellQuote(spec.User)
		}
		return line + " " + shellQuote(parts[1]) + " " + quoteAll(spec.Cmd)
	case hc.method == "DELETE" && len(parts) == 2 && parts[0] == "containers":
		return "docker rm -f " + shellQuote(parts[1])
	case hc.method == "DELETE" && len(parts) == 2 && parts[0] == "volumes":
		return "docker volume rm " + shellQuote(parts[1])
	case hc.method == "POST" && p == "/images/create" && q.Get("fromImage") != "":
		return "docker pull " + shellQuote(q.Get("fromImage"))
	case hc.method == "POST" && strings.HasSuffix(p, "/prune"):
		return "docker " + parts[0] + " prune -f"
	}
	return ""
}

// containerSpec turns a create body into docker run's options and image.
func containerSpec(body string) string {
	var spec struct {
		Image      string
		Cmd        []string
		User       string
		HostConfig struct {
			Binds       []string
			Privileged  bool
			PidMode     string
			NetworkMode string
			IpcMode     string
			CapAdd      []string
			Devices     []struct{ PathOnHost string }
		}
	}
	_ = json.Unmarshal([]byte(body), &spec)
	var opts []string
	h := spec.HostConfig
	if h.Privileged {
		opts = append(opts, "--privileged")
	}
	for _, b := range h.Binds {
		opts = append(opts, "-v", shellQuote(b))
	}
	for _, kv := range [][2]string{{"--pid", h.PidMode}, {"--network", h.NetworkMode}, {"--ipc", h.IpcMode}} {
		if kv[1] != "" {
			opts = append(opts, kv[0], shellQuote(kv[1]))
		}
	}
	for _, c := range h.CapAdd {
		opts = append(opts, "--cap-add", shellQuote(c))
	}
	for _, d := range h.Devices {
		opts = append(opts, "--device", shellQuote(d.PathOnHost))
	}
	if spec.User != "" {
		opts = append(opts, "-u", shellQuote(spec.User))
	}
	image := spec.Image
	if image == "" {
		image = "image"
	}
	opts = append(opts, shellQuote(image))
	if len(spec.Cmd) > 0 {
		opts = append(opts, quoteAll(spec.Cmd))
	}
	return strings.Join(opts, " ")
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// spliceAPI adds to a the CLI commands its raw API calls amount to.
func spliceAPI(a *shell.Analysis, lim shell.Limits) {
	for i, n := 0, len(a.Commands); i < n; i++ {
		if line := apiEquivalent(&a.Commands[i]); line != "" {
			a.Splice(shell.Analyze(line, lim), i, shell.ViaAPI, "", lim.MaxCommands)
		}
	}
}
