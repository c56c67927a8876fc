// Command ahp-opa-hook is the small native hook an agent runs on every tool
// call: it hands the payload to the warm per-user decision daemon (starting
// `ahp-opa daemon` when none runs) and prints the agent's answer. It never
// links OPA, so it starts in about a millisecond; when the daemon cannot be
// used it runs `ahp-opa hook --no-daemon` instead, and when even that fails
// it answers the agent's deny (fail closed) unless --fail-open.
//
//	ahp-opa-hook [--fail-open] [--config FILE] [--policy PATH]... [--with-builtin] [--no-daemon] [--timeout D] [--idle-timeout D] AGENT
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/ahp-opa/ahp-opa/adapters"
	"github.com/ahp-opa/ahp-opa/daemon"
)

type options struct {
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
	o := options{timeout: 9 * time.Second}
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
				o.timeout, err = time.ParseDuration(v)
			}
		default:
			if len(a) > 0 && a[0] == '-' {
				return o, fmt.Errorf("unknown flag %s", a)
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
		return o, errors.New("usage: ahp-opa-hook [--fail-open] [--config FILE] [--policy PATH]... AGENT")
	}
	return o, nil
}

// policyArgs are the arguments that choose the policy, shared with the
// daemon's key.
func (o options) policyArgs() []string {
	return daemon.Args(o.config, o.policies, o.withBuiltin)[1:]
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
	return exec.LookPath("ahp-opa")
}

func main() {
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
			return adapters.Answer{}, fmt.Errorf("ahp-opa not found next to ahp-opa-hook or on PATH: %w", ferr)
		}
	}
	if !o.noDaemon {
		if dir, err := daemon.RuntimeDir(); err == nil {
			daemonArgs := append([]string{"daemon"}, o.policyArgs()...)
			paths := daemon.PathsFor(dir, daemon.Key(daemonArgs, os.Environ()))
			chain.Noted = paths.Noted
			c := &daemon.Client{Paths: paths}
			if ferr == nil {
				spawnArgs := append(slices.Clone(daemonArgs), "--socket", paths.Socket)
				if o.idleTimeout != "" {
					spawnArgs = append(spawnArgs, "--idle-timeout", o.idleTimeout)
				}
				c.Start = daemon.Spawn(full, spawnArgs, filepath.Join(dir, "daemon.log"))
			}
			chain.Daemon = c
		}
	}
	return chain.Answer(ctx, o.agent, payload)
}

func refuseOrExit(agent, reason string) adapters.Answer {
	ans, err := adapters.Refuse(agent, reason)
	if err != nil {
		return adapters.Answer{Stderr: reason, Exit: 2}
	}
	return ans
}
