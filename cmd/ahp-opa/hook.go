package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/nativehook"
	"github.com/ahp-opa/ahp-opa/internal/service"
)

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
	cfg, err := config.Load(fs, configPath, os.Environ)
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
	if cfg.Audit.File.Path == audit.Stdout {
		return refuse(agent, "ahp-opa: configuration: audit.file.path \"-\" (standard output) cannot be used by hooks, whose stdout carries the answer (fix the configuration)", cfg.Hook.FailOpen)
	}
	// The policy loads on the first tool.before (Lazy), so that
	// observations and unreadable payloads never compile a policy; the
	// reloader outlives the request that starts it.
	svc, err := service.New(context.WithoutCancel(ctx), cfg, service.Options{Logger: log, Lazy: true, PerCall: true, WaitRemote: true, AuditLog: true})
	if err != nil {
		// Run still answers as it does for every failure: a deny for a
		// tool call, "no decision" for an observation.
		return adapters.Run(ctx, failedHook{fmt.Errorf("configuration: %v (fix the configuration)", err)}, agent, payload, opts)
	}
	// Close does not wait for a policy still compiling: the process is
	// ending, and a hook that timed out must not outlast its answer.
	defer svc.Close()
	return adapters.Run(ctx, serviceHook{svc, cfg}, agent, payload, opts)
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

// serviceHook decides native hook events through a service, starting its
// policy on the first decision: the same audit and engine layers as serve,
// so decisions and observations reach the audit log and session facts
// build up for the policy. The in-process hook and the decision daemon
// both answer through it.
type serviceHook struct {
	svc *service.Service
	cfg config.Config // what a policy that does not load is named by
}

// Decide implements adapters.Decider. It returns once ctx is done, even
// while the policy is still compiling, so adapters.Run can call it inline.
func (h serviceHook) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	if err := startError(h.cfg, h.svc.Start(ctx)); err != nil {
		return adapters.Decision{}, err
	}
	return nativehook.Decider{Interceptor: h.svc.Server.Interceptor, Observer: h.svc.Server.Observer}.Decide(ctx, ev)
}

// Observe implements adapters.Observer: post-tool and session events go to
// the audit log as AHP observations do, with no policy loaded for them.
func (h serviceHook) Observe(ctx context.Context, ev *adapters.Event) error {
	return nativehook.Decider{Observer: h.svc.Server.Observer}.Observe(ctx, ev)
}

// failedHook answers every event with the error that kept the service
// from starting.
type failedHook struct{ err error }

func (h failedHook) Decide(context.Context, *adapters.Event) (adapters.Decision, error) {
	return adapters.Decision{}, h.err
}

func (h failedHook) Observe(context.Context, *adapters.Event) error { return h.err }

// startError turns a failed start into a reason the user can act on.
func startError(cfg config.Config, err error) error {
	if pe, ok := errors.AsType[*service.PolicyError](err); ok {
		return policyError(cfg, pe.Err)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, service.ErrClosed) {
		return fmt.Errorf("%v (fix the configuration)", err)
	}
	return err
}

// policyError turns a policy that does not load into a reason that names
// it and the command that shows every problem.
func policyError(cfg config.Config, err error) error {
	paths := strings.Join(cfg.Policy, " ")
	if paths == "" {
		return fmt.Errorf("the policy failed to load: %v (run 'ahp-opa test' to check it)", err)
	}
	if cfg.WithBuiltin {
		return fmt.Errorf("policy %s failed to load: %v (run 'ahp-opa test --with-builtin %s' to see every error)", paths, err, paths)
	}
	return fmt.Errorf("policy %s failed to load: %v (run 'ahp-opa test %s' to see every error)", paths, err, paths)
}
