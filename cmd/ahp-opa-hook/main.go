// Command ahp-opa-hook is the small native hook an agent runs on every tool
// call: it hands the payload to the warm per-user decision daemon (starting
// `ahp-opa daemon` when none runs) and prints the agent's answer. It never
// links OPA, so it starts in about a millisecond; when the daemon cannot be
// used it runs `ahp-opa hook --no-daemon` instead, and when even that fails
// it answers the agent's deny (fail closed) unless --fail-open.
//
// With the agent "ahp" it is a per_event AHP stdio backend instead: each
// message line on stdin goes to the daemon, which answers it as `ahp-opa
// serve --stdio` would, and when the daemon cannot be used the input goes
// to `ahp-opa serve --stdio` itself.
//
//	ahp-opa-hook [--fail-open] [--config FILE] [--policy PATH]... [--with-builtin] [--no-daemon] [--timeout D] [--idle-timeout D] AGENT
//	ahp-opa-hook [--config FILE] [--policy PATH]... [--with-builtin] [--no-daemon] [--timeout D] [--idle-timeout D] ahp
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
)

// usage is what --help prints, and what a wrong command line is told.
var usage = `Usage:
  ahp-opa-hook [flags] AGENT   decide one native hook payload (stdin) for AGENT:
                               ` + strings.Join(adapters.Names, ", ") + `
  ahp-opa-hook [flags] ahp     answer AHP stdio messages, one per line (a per_event backend)

Flags:
  --policy PATH      Rego path (.rego file, directory or bundle), repeatable;
                     default: the built-in library
  --with-builtin     serve the built-in library alongside --policy
  --config FILE      YAML configuration file
  --fail-open        answer "no decision" instead of a deny when none can be
                     made (not with ahp)
  --no-daemon        decide in a process of its own (ahp-opa hook) instead of
                     asking the per-user decision daemon
  --timeout D        deadline for one answer (default ` + daemon.DefaultHookTimeout.String() + `)
  --idle-timeout D   how long a daemon this hook starts stays up unused
  -h, --help         print this help

ahp-opa install AGENT registers this hook in the agent's settings.
`

type options struct {
	help        bool
	agent       string
	failOpen    bool
	noDaemon    bool
	config      string
	policies    []string
	withBuiltin bool
	timeout     time.Duration
	idleTimeout string
}

func parseArgs(args []string) (options, error) {
	o := options{timeout: daemon.DefaultHookTimeout}
	if err := o.fromEnv(os.Getenv); err != nil {
		return o, err
	}
	value := func(i *int, name string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("%s needs a value", name)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var err error
		switch a {
		case "-h", "--help":
			o.help = true
			return o, nil
		case "--fail-open":
			o.failOpen = true
		case "--no-daemon":
			o.noDaemon = true
		case "--with-builtin":
			o.withBuiltin = true
		case "--config":
			o.config, err = value(&i, a)
		case "--policy":
			var p string
			p, err = value(&i, a)
			o.policies = append(o.policies, p)
		case "--idle-timeout":
			o.idleTimeout, err = value(&i, a)
		case "--timeout":
			var v string
			if v, err = value(&i, a); err == nil {
				if o.timeout, err = time.ParseDuration(v); err != nil {
					err = fmt.Errorf("--timeout %q: want a duration such as 9s", v)
				}
			}
		default:
			if len(a) > 0 && a[0] == '-' {
				return o, fmt.Errorf("unknown flag %s (ahp-opa-hook --help lists them)", a)
			}
			if o.agent != "" {
				return o, fmt.Errorf("one agent only, got %s and %s", o.agent, a)
			}
			o.agent = a
		}
		if err != nil {
			return o, err
		}
	}
	if o.agent == "" {
		return o, errors.New("no agent given (ahp-opa-hook --help lists the agents and flags)")
	}
	if o.agent == daemon.AgentAHP && o.failOpen {
		return o, errors.New("--fail-open does not apply to ahp: the harness's failurePolicy decides what a failure means")
	}
	return o, nil
}

// fromEnv applies hook.no_daemon and hook.fail_open set as AHP_OPA_HOOK__*
// variables, as every other command reads them; flags given later win.
// The timeout stays the flag's alone: install reads it from the command
// line to register a longer one with the agent.
func (o *options) fromEnv(getenv func(string) string) error {
	for _, b := range []struct {
		name string
		to   *bool
	}{{"AHP_OPA_HOOK__NO_DAEMON", &o.noDaemon}, {"AHP_OPA_HOOK__FAIL_OPEN", &o.failOpen}} {
		if v := getenv(b.name); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s=%q: want true or false", b.name, v)
			}
			*b.to = on
		}
	}
	return nil
}

// launch resolves the configuration against the working directory:
// the daemon's arguments, environment and key (daemon.Resolve).
func (o options) launch() (daemon.Launch, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return daemon.Launch{}, fmt.Errorf("working directory: %w", err)
	}
	return daemon.Resolve(cwd, o.config, o.policies, o.withBuiltin, os.Environ()), nil
}

// policyArgs are the arguments that choose the policy, paths absolute,
// for the in-process fallbacks (which run here, with this environment).
func (o options) policyArgs() []string {
	l, err := o.launch()
	if err != nil {
		// No directory to resolve against: the fallback runs in this
		// one, so the paths as given mean the same there.
		var args []string
		if o.config != "" {
			args = append(args, "--config", o.config)
		}
		for _, p := range o.policies {
			args = append(args, "--policy", p)
		}
		if o.withBuiltin {
			args = append(args, "--with-builtin")
		}
		return args
	}
	return l.Args[1:]
}

// findFull locates the full ahp-opa binary: next to this one, then on PATH.
func findFull() (string, error) {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			next := filepath.Join(filepath.Dir(self), "ahp-opa")
			if fi, err := os.Stat(next); err == nil && !fi.IsDir() {
				return next, nil
			}
		}
	}
	p, err := exec.LookPath("ahp-opa")
	if err != nil {
		return "", fmt.Errorf("ahp-opa not found next to ahp-opa-hook or on PATH: %w", err)
	}
	return p, nil
}

func main() {
	if o, err := parseArgs(os.Args[1:]); err == nil && o.help {
		fmt.Print(usage)
		return
	} else if o.agent == daemon.AgentAHP {
		if err == nil {
			err = serveAHP(o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ahp-opa-hook:", err)
			os.Exit(1)
		}
		return
	}
	ans := run(os.Args[1:])
	if len(ans.Stdout) > 0 {
		os.Stdout.Write(ans.Stdout)
	}
	if ans.Stderr != "" {
		fmt.Fprintln(os.Stderr, ans.Stderr)
	}
	os.Exit(ans.Exit)
}

func run(args []string) adapters.Answer {
	o, err := parseArgs(args)
	if err != nil {
		agent := o.agent
		if agent == "" && len(args) > 0 {
			agent = args[len(args)-1]
		}
		return refuseOrExit(agent, "ahp-opa-hook: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	payload, err := daemon.ReadPayload(os.Stdin)
	if err != nil {
		return refuseOrExit(o.agent, "ahp-opa-hook: "+err.Error())
	}
	chain := &daemon.Chain{FailOpen: o.failOpen, Refuse: adapters.Refuse}
	full, ferr := findFull()
	if ferr == nil {
		inArgs := append([]string{"hook", "--no-daemon"}, o.policyArgs()...)
		if o.failOpen {
			inArgs = append(inArgs, "--fail-open")
		}
		chain.InProcess = daemon.ExecHook(full, inArgs)
	} else {
		chain.InProcess = func(context.Context, string, []byte) (adapters.Answer, error) {
			return adapters.Answer{}, ferr
		}
	}
	if !o.noDaemon {
		if chain.Daemon, chain.Noted, err = o.client(full, ferr); err != nil {
			chain.Unavailable = err.Error()
		}
	}
	return chain.Answer(ctx, o.agent, payload)
}

// client is the daemon client for o's resolved configuration, with the
// note marker; it starts the daemon from full. err says why there is no
// client: without the full binary there is no daemon to start, nor a
// build to tell a running one's from.
func (o options) client(full string, ferr error) (c *daemon.Client, noted string, err error) {
	if ferr != nil {
		return nil, "", ferr
	}
	l, err := o.launch()
	if err != nil {
		return nil, "", err
	}
	dir, err := daemon.RuntimeDir()
	if err != nil {
		return nil, "", err
	}
	paths := daemon.PathsFor(dir, l.Key)
	c = &daemon.Client{Paths: paths, Version: daemon.Identity(full)}
	spawnArgs := append(slices.Clone(l.Args), "--socket", paths.Socket)
	if o.idleTimeout != "" {
		spawnArgs = append(spawnArgs, "--idle-timeout", o.idleTimeout)
	}
	c.Start = daemon.Spawn(full, spawnArgs, l.Env, l.Dir, paths.Log)
	return c, paths.Noted, nil
}

// serveAHP answers AHP messages on stdin through the daemon, else through
// `ahp-opa serve --stdio`; an error means a message went unanswered.
func serveAHP(o options) error {
	a := &daemon.AHP{Timeout: o.timeout, Stderr: os.Stderr}
	full, ferr := findFull()
	if ferr == nil {
		// One message at a time: answers in input order, as the daemon
		// gives them. No HTTP binding, whatever the configuration says: its
		// port may be taken by the user's own server.
		args := append([]string{"serve", "--stdio", "--http=", "--concurrency", "1"}, o.policyArgs()...)
		a.Fallback = daemon.ExecServe(full, args, os.Stderr)
	} else {
		a.FallbackErr = ferr
	}
	if !o.noDaemon {
		var err error
		if a.Daemon, a.Noted, err = o.client(full, ferr); err != nil {
			a.Unavailable = err.Error()
		}
	}
	return a.Serve(context.Background(), os.Stdin, os.Stdout)
}

func refuseOrExit(agent, reason string) adapters.Answer {
	ans, err := adapters.Refuse(agent, reason)
	if err != nil {
		return adapters.Answer{Stderr: reason, Exit: 2}
	}
	return ans
}
