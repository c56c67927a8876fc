package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles/remote"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/rollout"
	"github.com/ahp-opa/ahp-opa/transport"
)

func serveCommand() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve (--stdio | --http ADDR | both) [--policy PATH]... [--config FILE]",
		Short: "Answer AHP requests from a harness",
		Long: `Serve answers hooks/intercept requests and takes hooks/observe notifications.

With --stdio it reads one JSON-RPC message per line on stdin and writes one
response per line on stdout, for both persistent and per_event harnesses.
With --http ADDR it answers POST /ahp, with /healthz, /readyz and /metrics
beside it, and the native HTTP hooks of Claude Code and Copilot at POST
/hooks/claude-code and /hooks/copilot, answered as 'ahp-opa hook' would; a bearer token (--token-file or $AHP_OPA_TOKEN) is required off
loopback. Both bindings can run together on one engine; stdin closing then
stops the process. Logs go to stderr. Without --policy the built-in library
decides.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags(), configPath, os.Environ)
			if err != nil {
				return err
			}
			if !cfg.Stdio && cfg.HTTP == "" {
				return errors.New("choose a binding: --stdio, --http ADDR, or both")
			}
			if cfg.Stdio && cfg.Audit.File.Path == audit.Stdout {
				return errors.New("configuration: audit.file.path \"-\" (standard output) cannot be used with --stdio, whose stdout carries the protocol")
			}
			// A reader of stdout or stderr that goes away (| head, a crashed
			// collector) must not kill the process: writes fail with EPIPE
			// instead, and each sink reports it.
			signal.Ignore(syscall.SIGPIPE)
			log, err := newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			context.AfterFunc(ctx, stop) // a second signal ends the process at once
			web, err := prepareHTTP(cfg.HTTPConfig, os.Getenv, log)
			if err != nil {
				return err
			}
			defer web.Close()
			dec, err := startDecisions(ctx, cfg, log, false)
			if err != nil {
				return err
			}
			defer dec.Close()
			srv := dec.Server
			var stdio *transport.Stdio
			if cfg.Stdio {
				stdio = &transport.Stdio{Server: srv, MaxMessageBytes: cfg.MaxMessageBytes, Concurrency: cfg.Concurrency}
				log.Debug("serving on stdio", "revision", dec.Reloader.Status().Revision)
			}
			var h *transport.HTTP
			if web != nil {
				h = web.binding(srv, readiness(dec.Engine), dec.Metrics)
				h.Health = dec.Audit.Health
				h.Hooks = &adapters.Options{FailOpen: cfg.Hook.FailOpen, Timeout: cfg.Hook.Timeout, Logger: log, Inline: true}
			}
			if err := serveBindings(ctx, log, stdio, web, h); err != nil {
				return err
			}
			if ctx.Err() != nil {
				log.Info("stopped by signal")
			}
			return nil
		},
	}
	defer func() { cmd.Long += fileOnlyKeysHelp(cmd.Flags()) }()
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().Bool("stdio", false, "serve the stdio binding on stdin/stdout")
	addEngineFlags(cmd.Flags())
	cmd.Flags().StringSlice("canary", nil, "canary policy `path`, repeatable: evaluated beside the live policy off the answer path; disagreements are recorded")
	cmd.Flags().Int("max-message-bytes", transport.DefaultMaxMessageBytes, "framing limit: longest stdio line read (-32600 above)")
	cmd.Flags().Int("concurrency", 2, "requests decided at once")
	cmd.Flags().String("audit-log", "", "append audit records (JSONL) to `file` (\"-\": stdout, not with --stdio); SIGHUP reopens it")
	addWatchFlags(cmd.Flags())
	addHTTPFlags(cmd.Flags())
	return cmd
}

// startAudit starts the auditor, with its log file when one is configured.
// SIGHUP reopens the file for external log rotation. The auditor stops with
// ctx's process: the caller closes it.
func startAudit(ctx context.Context, cfg audit.Config, facts *audit.Facts, log *slog.Logger) (*audit.Auditor, error) {
	var (
		out  audit.Writer
		file *audit.File
	)
	switch cfg.File.Path {
	case "":
	case audit.Stdout:
		out = audit.NewStream(os.Stdout)
	default:
		var err error
		if file, err = audit.OpenFile(cfg.File); err != nil {
			return nil, err
		}
		out = file
	}
	aud, err := audit.New(cfg, out, facts, log)
	if err != nil {
		return nil, err
	}
	if file != nil {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		go func() {
			defer signal.Stop(hup)
			for {
				select {
				case <-hup:
					if err := file.Reopen(); err != nil {
						log.Error("reopening the audit log", "err", err)
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return aud, nil
}

// startCanary loads the canary policy with its own reloader (it reloads
// like the live one) and starts the canary that compares it with the live
// policy, recording disagreements through aud. The canary policy is the
// canary paths, with the built-in library and its configuration when the
// live policy has them; remote bundles stay with the live policy.
func startCanary(ctx context.Context, cfg Config, log *slog.Logger, aud *audit.Auditor) (*rollout.Canary, func(), error) {
	ccfg := cfg
	ccfg.Policy, ccfg.Bundles = cfg.Canary, nil
	clog := log.With("policy", "canary")
	eng, rl, err := startEngine(ctx, ccfg, clog, true, false, nil, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("canary policy: %w", err)
	}
	c := rollout.NewCanary(rollout.EngineCandidate(eng, cfg.EvalTimeout), aud, rollout.CanaryOptions{Logger: clog})
	clog.Info("canary policy active", "revision", rl.Status().Revision)
	return c, func() {
		c.Close()
		rl.Stop()
	}, nil
}

// addEngineFlags declares the flags every command that decides shares.
func addEngineFlags(fs *pflag.FlagSet) {
	fs.StringSlice("policy", nil, "Rego `path` (.rego file, directory or OPA bundle .tar.gz), repeatable; default: the built-in library")
	fs.Bool("with-builtin", false, "serve the built-in library alongside --policy")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("log-format", "auto", "auto (text on a terminal, JSON otherwise), text or json")
	fs.Duration("eval-timeout", engine.DefaultEvalTimeout, "deadline for one policy evaluation")
	fs.String("on-rule-error", string(engine.RuleErrorDeny), "what a deny rule that fails to evaluate means: deny (the event, naming the rule), ignore (the rule) or error (-32004)")
	fs.StringSlice("shadow", nil, "deny code or package to evaluate without answering (would_deny in audit, logs, metrics), repeatable")
	fs.Int("max-input-bytes", transport.DefaultMaxInputBytes, "largest request decided by the policy; larger ones are denied as too large to check")
	addPolicySourceFlags(fs)
}

// startShipper sends decisions to an OPA-compatible decision-log service
// when decision_logs names one of the configured services.
func startShipper(cfg Config, log *slog.Logger) (*audit.Shipper, error) {
	name := cfg.DecisionLogs.Service
	if name == "" {
		return nil, nil
	}
	opa, err := cfg.PolicySources.opaConfig()
	if err != nil {
		return nil, err
	}
	services, err := remote.Services(opa, log)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	client, ok := services[name]
	if !ok {
		return nil, fmt.Errorf("configuration: decision_logs.service %q is not among the configured services", name)
	}
	upload := func(ctx context.Context, body []byte) error {
		resp, err := client.WithHeader("Content-Type", "application/json").
			WithHeader("Content-Encoding", "gzip").WithBytes(body).Do(ctx, http.MethodPost, "/logs")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("decision log service answered %s", resp.Status)
		}
		return nil
	}
	host, _ := os.Hostname()
	return audit.NewShipper(cfg.DecisionLogs, upload, map[string]string{"id": host, "app": "ahp-opa"}, log), nil
}
