package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/rollout"
	"github.com/ahp-opa/ahp-opa/internal/service"
)

// exitChanged is replay's exit status when decisions changed, so that a CI
// job can gate a policy pull request on it.
const exitChanged = 3

func replayCommand() *cobra.Command {
	var configPath, format string
	var maxChanged, maxRules int
	cmd := &cobra.Command{
		Use:   "replay --audit-log FILE [--policy PATH]... [--with-builtin] [--format text|json]",
		Short: "Re-decide the tool calls of an audit log with a candidate policy and show what changes",
		Long: `Replay reads an audit log line by line, re-decides every recorded tool.before
with the policy given by --policy (and --with-builtin), and compares each
answer with the one recorded: unchanged, newly denied, newly allowed, or
denied with another code or reason, in total and by rule, then each
changed event.

The log must hold the redacted input of each decision: serve records it
with audit.include_input: true (configuration file) or
AHP_OPA_AUDIT__INCLUDE_INPUT=true. Session facts (input.ahp.session) are
not recorded; replay rebuilds them from the log's own decisions and
tool.after observations, in log order. Malformed, truncated and
over-long lines are skipped and counted. Recorded text is shown with
control characters and terminal escapes written as visible escapes
(\x1b, \u202e).

Exit status: 0 when no decision changed, 3 when some did, 1 on error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("--format %q: want text or json", format)
			}
			cfg, err := config.Load(withoutFlags(cmd.Flags(), "format", "max-changed", "max-rules"), configPath, os.Environ)
			if err != nil {
				return err
			}
			path := cfg.Audit.File.Path
			if path == "" {
				return fmt.Errorf("name the audit log to replay with --audit-log FILE")
			}
			if !cmd.Flags().Changed("log-level") && cfg.LogLevel == "info" {
				cfg.LogLevel = "warn" // the engine logs every deny at info
			}
			log, err := newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			facts := audit.NewReplayFacts(cfg.Audit.SessionTTL)
			svc, err := service.New(cmd.Context(), cfg, service.Options{Logger: log, WaitRemote: true, Facts: facts})
			if err != nil {
				return err
			}
			defer svc.Close()
			eng := svc.Engine()
			red, err := audit.NewRedactor(cfg.Audit.Redact)
			if err != nil {
				return fmt.Errorf("configuration: %w", err)
			}
			opts := rollout.ReplayOptions{Facts: facts, MaxChanged: maxChanged, MaxRules: maxRules, Redactor: red}
			if isTerminal(os.Stderr) {
				opts.Progress = progressPrinter(os.Stderr)
			}
			rep, err := rollout.Replay(cmd.Context(), f, eng, opts)
			if opts.Progress != nil {
				fmt.Fprintln(os.Stderr)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				err = rep.WriteJSON(out)
			} else {
				err = rep.WriteText(out)
			}
			if err != nil {
				return err
			}
			if rep.Changes() > 0 {
				return exitError{code: exitChanged}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().String("audit-log", "", "the audit log (JSONL) to replay")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().IntVar(&maxChanged, "max-changed", rollout.DefaultMaxChanged, "list at most this many changed events; the rest are counted")
	cmd.Flags().IntVar(&maxRules, "max-rules", rollout.DefaultMaxRules, "list at most this many rules; the changes of the rest are counted together")
	addEngineFlags(cmd.Flags())
	return cmd
}

// progressPrinter shows on a terminal how far a replay has got, at most a
// few times a second, on one line it rewrites.
func progressPrinter(w io.Writer) func(rollout.Progress) {
	var last time.Time
	start := time.Now()
	return func(p rollout.Progress) {
		now := time.Now()
		if now.Sub(last) < 200*time.Millisecond {
			return
		}
		last = now
		rate := float64(p.Events) / now.Sub(start).Seconds()
		fmt.Fprintf(w, "\rreplayed %d events, %d lines, %.1f MB (%.0f events/s) ", p.Events, p.Lines, float64(p.Bytes)/1e6, rate)
	}
}
