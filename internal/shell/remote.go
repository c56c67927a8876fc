package shell

import (
	"encoding/json"
	"strings"
)

// ViaRunner marks a command that another program starts elsewhere from
// its argument vector, with no shell in between: docker exec CTR CMD,
// kubectl exec POD -- CMD.
const ViaRunner = "runner"

// Commands handed to somewhere else (a container, a pod, a cluster node,
// another host) are analysed as if typed here, and marked with where they
// run, so that every rule about the command applies to it.

// containerGlobals are the options of docker, podman and nerdctl before
// the subcommand that take a value.
var containerGlobals = wrapper{
	values:     "cHl",
	longValues: []string{"--context", "--host", "--config", "--log-level", "--tlscacert", "--tlscert", "--tlskey", "--connection", "--url", "--identity", "--root", "--runroot", "--namespace", "--address", "--storage-driver", "--cgroup-manager"},
}

// composeGlobals are the options of docker compose before its subcommand
// that take a value.
var composeGlobals = wrapper{
	values:     "fp",
	longValues: []string{"--file", "--project-name", "--profile", "--project-directory", "--env-file", "--ansi", "--parallel", "--progress"},
}

// containerExec reads docker exec [options] CONTAINER CMD …
var containerExec = wrapper{
	values:     "euw",
	longValues: []string{"--env", "--env-file", "--user", "--workdir", "--detach-keys"},
	operands:   1,
}

// containerRun reads docker run [options] IMAGE [CMD …], and compose run
// SERVICE [CMD …].
var containerRun = wrapper{
	values: "acehlmpuvw",
	longValues: []string{
		"--attach", "--env", "--env-file", "--hostname", "--label", "--label-file", "--memory", "--publish",
		"--user", "--volume", "--workdir", "--name", "--network", "--net", "--network-alias", "--mount",
		"--entrypoint", "--restart", "--platform", "--pull", "--cpus", "--cpu-shares", "--cpuset-cpus",
		"--memory-swap", "--cap-add", "--cap-drop", "--device", "--security-opt", "--add-host", "--dns",
		"--dns-search", "--dns-option", "--log-driver", "--log-opt", "--ulimit", "--tmpfs", "--shm-size",
		"--pid", "--ipc", "--uts", "--userns", "--cgroupns", "--gpus", "--runtime", "--stop-signal",
		"--stop-timeout", "--health-cmd", "--health-interval", "--health-retries", "--health-timeout",
		"--volumes-from", "--ip", "--ip6", "--cidfile", "--expose", "--group-add", "--link", "--mac-address",
		"--detach-keys", "--isolation", "--storage-opt", "--sysctl", "--cgroup-parent", "--annotation",
		"--init-path", "--oom-score-adj", "--pids-limit", "--blkio-weight", "--kernel-memory",
		"--memory-reservation", "--device-cgroup-rule", "--domainname", "--volume-driver", "--service-ports",
	},
	operands: 1,
}

// container analyses the command docker, podman or nerdctl runs in a
// container: exec, run, and their compose forms.
func (a *analyzer) container(idx int, args []field, redirs []Redirect, sc scope) {
	n, _, _ := containerGlobals.unwrap(args)
	if n < 0 {
		return
	}
	args = args[n:]
	if args[0].text == "container" && len(args) > 1 {
		args = args[1:]
	}
	if args[0].text == "compose" || args[0].text == "compose-v2" {
		if n, _, _ = composeGlobals.unwrap(args[1:]); n < 0 {
			return
		}
		args = args[1+n:]
	}
	sub, rest := args[0].text, args[1:]
	var w wrapper
	switch sub {
	case "exec":
		w = containerExec
	case "run":
		w = containerRun
	default:
		return
	}
	n, _, _ = w.unwrap(rest)
	opts := rest // the options, and the image or container last
	if n >= 0 {
		opts = rest[:n]
	}
	var entry []field
	for _, f := range optionValues(opts, 0, "--entrypoint") {
		entry = splitFields(f)
	}
	if n < 0 && entry == nil {
		return
	}
	cmd := entry
	if n >= 0 {
		cmd = append(entry, rest[n:]...)
	}
	if len(cmd) == 0 {
		return
	}
	child := sc.nested(ViaRunner, idx).at(WhereContainer)
	if sub == "run" {
		if hasShortOption(opts, 'd', "--detach") {
			child = child.at(WhereDetached)
		}
		for _, f := range optionValues(opts, 0, "--restart") {
			if p, _, _ := strings.Cut(f.text, ":"); p == "always" || p == "unless-stopped" || p == "on-failure" {
				child = child.at(WherePersistent)
			}
		}
		// The container sees the host's files under the paths they are
		// mounted at: a read of /keys/id_rsa is one of ~/.ssh/id_rsa.
		cmd = hostPaths(cmd, mounts(opts))
	}
	if c := a.reserve(child); c >= 0 {
		a.exec(c, cmd, nil, stdinOf(redirs), child, false)
	}
}

// stdinOf returns the redirections that feed a command's standard input,
// which a runner passes on to the command it starts (docker exec -i CTR sh
// <<EOF).
func stdinOf(redirs []Redirect) []Redirect {
	var out []Redirect
	for _, r := range redirs {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			out = append(out, r)
		}
	}
	return out
}

// splitFields splits an option's value at spaces (--entrypoint "sh -c").
func splitFields(f field) []field {
	var out []field
	for _, s := range strings.Fields(f.text) {
		out = append(out, field{text: s, dynamic: f.dynamic})
	}
	return out
}

// optionValues returns every value of -<letter> or --long in args.
func optionValues(args []field, letter byte, long string) []field {
	var out []field
	for i := 0; i < len(args); i++ {
		if v, ok := optionValue(args[i:min(i+2, len(args))], letter, long); ok {
			out = append(out, v)
			if args[i].text == long || (letter != 0 && args[i].text == "-"+string(letter)) {
				i++
			}
		}
	}
	return out
}

// mount is a host path seen inside a container at another path.
type mount struct{ host, inside string }

// mounts reads the bind mounts of a container command line: -v HOST:PATH,
// --volume, --mount type=bind,source=HOST,target=PATH.
func mounts(opts []field) []mount {
	var out []mount
	for _, f := range append(optionValues(opts, 'v', "--volume"), optionValues(opts, 0, "--mount")...) {
		var m mount
		if strings.Contains(f.text, "=") {
			for _, kv := range strings.Split(f.text, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "source", "src":
					m.host = v
				case "target", "destination", "dst":
					m.inside = v
				}
			}
		} else {
			parts := strings.Split(f.text, ":")
			if len(parts) >= 2 {
				m.host, m.inside = parts[0], parts[1]
			}
		}
		if m.host != "" && strings.HasPrefix(m.inside, "/") && m.inside != "/" && !strings.ContainsAny(m.host[:1], ".") {
			out = append(out, m)
		}
	}
	return out
}

// hostPaths rewrites the words of a container's command that name a path
// under a bind mount to the host path they stand for.
func hostPaths(words []field, ms []mount) []field {
	if len(ms) == 0 {
		return words
	}
	out := make([]field, len(words))
	for i, f := range words {
		out[i] = f
		for _, m := range ms {
			inside := strings.TrimSuffix(m.inside, "/")
			if f.text == inside || strings.HasPrefix(f.text, inside+"/") {
				out[i].text = strings.TrimSuffix(m.host, "/") + f.text[len(inside):]
				break
			}
		}
	}
	return out
}

// kubeGlobals are kubectl's and oc's options that take a value.
var kubeGlobals = wrapper{
	values:     "nsc",
	longValues: []string{"--namespace", "--context", "--kubeconfig", "--cluster", "--user", "--server", "--as", "--as-group", "--token", "--request-timeout", "--container", "--image", "--target", "--profile", "--copy-to", "--filename", "--pod-running-timeout", "--env", "--overrides", "--labels", "--port", "--restart", "--image-pull-policy", "--serviceaccount", "--custom"},
}

// kube analyses the command kubectl exec, debug and run start in a pod,
// or on a node's host for kubectl debug node/NAME.
func (a *analyzer) kube(idx int, args []field, redirs []Redirect, sc scope) {
	var sub string
	var ops []field
	dashes := -1
	for i := 0; i < len(args); i++ {
		s := args[i].text
		switch {
		case s == "--":
			dashes = i + 1
			i = len(args)
		case len(s) > 1 && s[0] == '-':
			if !strings.Contains(s, "=") && (contains(kubeGlobals.longValues, s) || len(s) == 2 && strings.IndexByte(kubeGlobals.values, s[1]) >= 0) {
				i++
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if len(ops) == 0 {
		return
	}
	sub = ops[0].text
	if sub != "exec" && sub != "debug" && sub != "run" {
		return
	}
	var cmd []field
	switch {
	case dashes >= 0:
		cmd = args[dashes:]
	case sub == "exec" && len(ops) > 2:
		cmd = ops[2:] // kubectl exec POD CMD, the older form
	}
	if len(cmd) == 0 {
		return
	}
	child := sc.nested(ViaRunner, idx).at(WhereContainer)
	if sub == "debug" && len(ops) > 1 && (strings.HasPrefix(ops[1].text, "node/") || strings.HasPrefix(ops[1].text, "nodes/")) {
		// The debugging pod shares the node's namespaces and mounts its
		// root file system at /host.
		child = sc.nested(ViaRunner, idx).at(WhereNode)
	}
	if c := a.reserve(child); c >= 0 {
		a.exec(c, cmd, nil, stdinOf(redirs), child, false)
	}
}

// argvRunners start the command after "--" (or after their target) in a
// container or a virtual machine: lxc exec CTR -- CMD.
var argvRunners = map[string]struct {
	sub   string
	where string
}{
	"lxc":        {"exec", WhereContainer},
	"incus":      {"exec", WhereContainer},
	"multipass":  {"exec", WhereRemote},
	"distrobox":  {"enter", WhereContainer},
	"toolbox":    {"run", WhereContainer},
	"machinectl": {"shell", WhereContainer},
}

// argvRunner analyses the command an argvRunner starts.
func (a *analyzer) argvRunner(idx int, name string, args []field, sc scope) {
	r := argvRunners[name]
	ops := operandsOf(args)
	if len(ops) == 0 || ops[0].text != r.sub {
		return
	}
	for i, f := range args {
		if f.text == "--" && i+1 < len(args) {
			child := sc.nested(ViaRunner, idx).at(r.where)
			if c := a.reserve(child); c >= 0 {
				a.exec(c, args[i+1:], nil, nil, child, false)
			}
			return
		}
	}
}

// remoteScript analyses the script a command runs on another host, where
// a shell parses it.
func (a *analyzer) remoteScript(idx int, f field, sc scope) {
	if f.dynamic {
		a.out.Commands[idx].DynamicCode = true
		return
	}
	a.script(f.text, sc.nested(ViaShell, idx).at(WhereRemote), false)
}

// cloudShell analyses the commands that cloud CLIs and VM managers run on
// a remote machine: vagrant ssh -c, gcloud compute ssh --command, aws ssm
// send-command --parameters commands=…, az vm run-command invoke
// --scripts, mosh HOST -- CMD.
func (a *analyzer) cloudShell(idx int, name string, args []field, sc scope) {
	ops := operandsOf(args)
	has := func(words ...string) bool {
		if len(ops) < len(words) {
			return false
		}
		for i, w := range words {
			if ops[i].text != w {
				return false
			}
		}
		return true
	}
	switch name {
	case "vagrant":
		if has("ssh") {
			for _, f := range optionValues(args, 'c', "--command") {
				a.remoteScript(idx, f, sc)
			}
		}
	case "gcloud":
		if has("compute", "ssh") || has("compute", "tpus", "tpu-vm", "ssh") || has("alpha", "compute", "ssh") || has("beta", "compute", "ssh") {
			for _, f := range optionValues(args, 0, "--command") {
				a.remoteScript(idx, f, sc)
			}
		}
	case "aws":
		if has("ssm", "send-command") {
			for _, f := range optionValues(args, 0, "--parameters") {
				for _, s := range ssmCommands(f.text) {
					a.remoteScript(idx, field{text: s, dynamic: f.dynamic}, sc)
				}
			}
		}
	case "az":
		if has("vm", "run-command") || has("vmss", "run-command") {
			for i, f := range args {
				if f.text != "--scripts" && f.text != "--script" {
					continue
				}
				for _, s := range args[i+1:] {
					if strings.HasPrefix(s.text, "--") {
						break
					}
					a.remoteScript(idx, s, sc)
				}
			}
		}
	case "mosh":
		rest := operandsAfterOptions(args, "p", []string{"--ssh", "--port", "--server", "--client", "--predict", "--family", "--bind-server", "--experimental-remote-ip"})
		if len(rest) > 1 && rest[1].text == "--" {
			rest = append(rest[:1:1], rest[2:]...)
		}
		if len(rest) > 1 {
			// mosh-server runs the words as an argument vector.
			child := sc.nested(ViaRunner, idx).at(WhereRemote)
			if c := a.reserve(child); c >= 0 {
				a.exec(c, rest[1:], nil, nil, child, false)
			}
		}
	}
}

// ssmCommands reads the commands of aws ssm send-command --parameters,
// in its JSON form ({"commands":["…"]}) or its shorthand
// (commands=["…","…"], commands=…).
func ssmCommands(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var p map[string][]string
		if json.Unmarshal([]byte(s), &p) == nil {
			return p["commands"]
		}
		return nil
	}
	v, ok := strings.CutPrefix(s, "commands=")
	if !ok {
		return nil
	}
	var list []string
	if json.Unmarshal([]byte(v), &list) == nil {
		return list
	}
	return []string{strings.Trim(v, "[]")}
}

// wsl analyses the command wsl runs in a Linux distribution on this
// machine: after -e/--exec an argument vector, otherwise a command line
// its default shell parses.
func (a *analyzer) wsl(idx int, args []field, sc scope) {
	for i := 0; i < len(args); i++ {
		switch s := args[i].text; {
		case s == "-d" || s == "--distribution" || s == "-u" || s == "--user" || s == "--cd" || s == "--shell-type":
			i++
		case s == "-e" || s == "--exec":
			if i+1 < len(args) {
				child := sc.nested(ViaRunner, idx)
				if c := a.reserve(child); c >= 0 {
					a.exec(c, args[i+1:], nil, nil, child, false)
				}
			}
			return
		case s == "--":
			i++
			fallthrough
		case !strings.HasPrefix(s, "-"):
			if i >= len(args) {
				return
			}
			if t, ok := joinKnown(args[i:]); ok {
				a.script(t, sc.nested(ViaShell, idx), false)
			} else {
				a.out.Commands[idx].DynamicCode = true
			}
			return
		case strings.HasPrefix(s, "--"):
			return // --install, --list, --shutdown: no command
		}
	}
}
