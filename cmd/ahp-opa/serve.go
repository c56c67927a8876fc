package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/nativehook"
	"github.com/ahp-opa/ahp-opa/internal/service"
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
decides. Policy files and the --config file are reloaded when they change
(docs/configuration.md says which keys need a restart).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src := config.Source{Flags: cmd.Flags(), Path: configPath, Environ: os.Environ}
			cfg, err := src.Load()
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
			svc, err := service.New(ctx, cfg, service.Options{
				Logger: log, Watch: true, Metrics: true, AuditLog: true, DecisionLogs: true, Canary: true, Source: src,
			})
			if err != nil {
				return err
			}
			defer svc.Close()
			policyReady()
			var stdio *transport.Stdio
			if cfg.Stdio {
				stdio = &transport.Stdio{Server: svc.Server, MaxMessageBytes: cfg.MaxMessageBytes, Concurrency: cfg.Concurrency}
				log.Debug("serving on stdio", "revision", svc.Reloader().Status().Revision)
			}
			var h *transport.HTTP
			if web != nil {
				h = web.binding(svc.Server, svc.Ready, svc.Metrics)
				h.Health = svc.Health
				h.Mounts = map[string]transport.Mount{nativehook.PathPrefix: &nativehook.Handler{
					Options: adapters.Options{FailOpen: cfg.Hook.FailOpen, Timeout: cfg.Hook.Timeout, Logger: log, Inline: true},
				}}
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
	defer func() { cmd.Long += config.FileOnlyKeysHelp(cmd.Flags()) }()
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
