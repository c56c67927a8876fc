package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
)

// HookConfig configures `ahp-opa hook`.
type HookConfig struct {
	// FailOpen answers "no decision" instead of a deny when no decision
	// can be made.
	FailOpen bool `koanf:"fail_open"`
	// Timeout bounds one answer, policy loading included.
	Timeout time.Duration `koanf:"timeout"`
	// NoDaemon makes ahp-opa-hook decide in a process of its own instead
	// of asking the decision daemon; `ahp-opa hook` always decides in
	// process.
	NoDaemon bool `koanf:"no_daemon"`
}

func defaultHookConfig() HookConfig { return HookConfig{Timeout: adapters.DefaultTimeout} }

func (h HookConfig) validate() error {
	if h.Timeout <= 0 {
		return fmt.Errorf("configuration: hook.timeout must be positive, got %s", h.Timeout)
	}
	return nil
}

func hookCommand() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "hook AGENT [--policy PATH]... [--with-builtin] [--config FILE] [--fail-open]",
		Short: "Answer one native hook call of " + strings.Join(adapters.Names, ", "),
		Long: `Hook reads one native hook payload of AGENT on stdin, decides it with the
same engine and policy as serve, and prints the agent's own answer on stdout:
its deny form with the reason, or its "no decision" answer (never allow, so
the agent's own permission prompt still applies). Observations (post-tool,
session start and end) are answered with "no decision".

When no decision can be made (unreadable payload, a policy that does not
compile, a timeout) the hook denies with a reason that says how to fix it;
--fail-open (hook.fail_open) lets the call go ahead instead. Exit status is 0
whenever an answer was printed. Logs go to stderr only.

It decides in this process; the small ahp-opa-hook binary asks the warm
decision daemon instead and falls back to this command.

AGENT is one of: ` + strings.Join(adapters.Names, ", ") + ".",
		// Every mistake must still answer the agent in a way it reads as a
		// block: cobra's own usage errors exit 1, which most agents ignore.
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return writeAnswer(cmd.OutOrStdout(), cmd.ErrOrStderr(), refuseEarly(args,
					fmt.Sprintf("ahp-opa hook: want exactly one AGENT (%s), got %d arguments", strings.Join(adapters.Names, ", "), len(args)), false))
			}
			ans := runHook(cmd.Context(), cmd.Flags(), configPath, args[0], cmd.InOrStdin(), cmd.ErrOrStderr())
			return writeAnswer(cmd.OutOrStdout(), cmd.ErrOrStderr(), ans)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().Bool("fail-open", false, "let the call go ahead when no decision can be made (default: deny)")
	cmd.Flags().Duration("timeout", adapters.DefaultTimeout, "bound on one answer, policy loading included")
	cmd.Flags().Bool("no-daemon", false, "decide in this process (always so for ahp-opa hook; ahp-opa-hook then skips the daemon)")
	addEngineFlags(cmd.Flags())
	// Hook output sits in the agent's own log: warnings and errors only.
	cmd.Flags().Lookup("log-level").DefValue = "warn"
	_ = cmd.Flags().Set("log-level", "warn")
	cmd.Flags().Lookup("log-level").Changed = false
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return writeAnswer(c.OutOrStdout(), c.ErrOrStderr(), refuseEarly(os.Args, fmt.Sprintf("ahp-opa hook: %v (see 'ahp-opa hook --help')", err), false))
	})
	return cmd
}

// runHook answers one payload; it never fails.
func runHook(ctx context.Context, fs *pflag.FlagSet, configPath, agent string, stdin io.Reader, stderr io.Writer) adapters.Answer {
	cfg, err := loadConfig(fs, configPath, os.Environ)
	if err != nil {
		failOpen, _ := fs.GetBool("fail-open")
		return refuse(agent, fmt.Sprintf("ahp-opa: %v (fix the configuration, or run 'ahp-opa hook --help')", err), failOpen)
	}
	log, err := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return refuse(agent, "ahp-opa: "+err.Error(), cfg.Hook.FailOpen)
	}
	opts := adapters.Options{FailOpen: cfg.Hook.FailOpen, Timeout: cfg.Hook.Timeout, Logger: log, Inline: true}
	payload, err := adapters.ReadPayload(stdin)
	if err != nil {
		return refuse(agent, "ahp-opa: "+err.Error(), cfg.Hook.FailOpen)
	}
	dec := &localDecider{cfg: cfg, log: log}
	defer dec.Close()
	return adapters.Run(ctx, dec, agent, payload, opts)
}

// refuse is the agent's deny (or, failing open, its "no decision") for a
// failure before Run; an unknown agent gets exit 2 and the reason on stderr.
func refuse(agent, reason string, failOpen bool) adapters.Answer {
	f := adapters.Refuse
	if failOpen {
		f = adapters.Pass
	}
	ans, err := f(agent, reason)
	if err != nil {
		return adapters.Answer{Stderr: fmt.Sprintf("%s; %v: want one of %s", reason, err, strings.Join(adapters.Names, ", ")), Exit: 2}
	}
	return ans
}

// refuseEarly refuses for the first agent name among args, when flags
// could not even be parsed.
func refuseEarly(args []string, reason string, failOpen bool) adapters.Answer {
	for _, a := range args {
		if adapters.Known(a) {
			return refuse(a, reason, failOpen)
		}
	}
	return adapters.Answer{Stderr: reason, Exit: 2}
}

// writeAnswer prints an answer: stdout exactly as rendered, stderr as one
// line, and the exit status through exitError.
func writeAnswer(stdout, stderr io.Writer, ans adapters.Answer) error {
	if len(ans.Stdout) > 0 {
		if _, err := stdout.Write(ans.Stdout); err != nil {
			return exitError{code: 1}
		}
	}
	if ans.Stderr != "" {
		fmt.Fprintln(stderr, ans.Stderr)
	}
	if ans.Exit != 0 {
		return exitError{code: ans.Exit}
	}
	return nil
}

// localDecider decides in this process, through the same audit and engine
// layers as serve: decisions and observations reach the audit log, and
// session facts build up for the policy. The auditor starts on the first
// event and the policy loads on the first tool.before, so that
// observations and unreadable payloads never compile a policy and a policy
// that does not load becomes a reason the user can act on.
type localDecider struct {
	cfg Config
	log *slog.Logger

	audOnce sync.Once
	aud     *audit.Auditor
	audErr  error

	once    sync.Once
	started chan struct{} // closed once start returned
	hook    transport.HookDecider
	rl      *bundles.Reloader
	err     error
}

// Decide implements adapters.Decider. It returns once ctx is done, even
// while the policy is still compiling, so adapters.Run can call it inline.
func (d *localDecider) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	d.once.Do(func() {
		d.started = make(chan struct{})
		go func() {
			defer close(d.started)
			d.err = d.start(ctx)
		}()
	})
	select {
	case <-d.started:
	case <-ctx.Done():
		return adapters.Decision{}, ctx.Err()
	}
	if d.err != nil {
		return adapters.Decision{}, d.err
	}
	return d.hook.Decide(ctx, ev)
}

// Observe implements adapters.Observer: post-tool and session events go to
// the audit log as AHP observations do.
func (d *localDecider) Observe(ctx context.Context, ev *adapters.Event) error {
	aud, err := d.auditor(ctx)
	if err != nil {
		return err
	}
	return transport.HookDecider{Observer: aud.Observer()}.Observe(ctx, ev)
}

func (d *localDecider) auditor(ctx context.Context) (*audit.Auditor, error) {
	d.audOnce.Do(func() {
		if d.cfg.Audit.File.Path == audit.Stdout {
			d.audErr = errors.New("configuration: audit.file.path \"-\" (standard output) cannot be used by hooks, whose stdout carries the answer (fix the configuration)")
			return
		}
		aud, err := startAudit(context.WithoutCancel(ctx), d.cfg.Audit, audit.NewFacts(d.cfg.Audit.SessionTTL), d.log)
		if err != nil {
			d.audErr = fmt.Errorf("configuration: audit: %v (fix the configuration)", err)
			return
		}
		d.aud = aud
	})
	return d.aud, d.audErr
}

func (d *localDecider) start(ctx context.Context) error {
	aud, err := d.auditor(ctx)
	if err != nil {
		return err
	}
	// The reloader outlives the request that starts it; Close stops it.
	eng, rl, err := startEngine(context.WithoutCancel(ctx), d.cfg, d.log, false, true, nil, aud.Facts(), nil)
	if err != nil {
		return policyError(d.cfg, err)
	}
	d.rl = rl
	d.hook = transport.HookDecider{Interceptor: aud.Interceptor(eng), Observer: aud.Observer()}
	return nil
}

// Close stops the reloader, if one started, and writes what the auditor
// still holds. It does not wait for a policy still compiling: the process
// is ending, and a hook that timed out must not outlast its answer.
func (d *localDecider) Close() {
	compiled := true
	if d.started != nil {
		select {
		case <-d.started:
		default:
			compiled = false
		}
	}
	if compiled && d.rl != nil {
		d.rl.Stop()
	}
	d.audOnce.Do(func() {}) // waits for an auditor being started
	if d.aud != nil {
		d.aud.Close()
	}
}

// policyError turns a policy that does not load into a reason that names
// it and the command that shows every problem.
func policyError(cfg Config, err error) error {
	paths := strings.Join(cfg.Policy, " ")
	if paths == "" {
		return fmt.Errorf("the policy failed to load: %v (run 'ahp-opa test' to check it)", err)
	}
	if cfg.WithBuiltin {
		return fmt.Errorf("policy %s failed to load: %v (run 'ahp-opa test --with-builtin %s' to see every error)", paths, err, paths)
	}
	return fmt.Errorf("policy %s failed to load: %v (run 'ahp-opa test %s' to see every error)", paths, err, paths)
}
