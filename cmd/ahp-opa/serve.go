package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
)

func serveCommand() *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve --stdio [--policy PATH]... [--config FILE]",
		Short: "Answer AHP requests from a harness",
		Long: `Serve answers hooks/intercept requests and takes hooks/observe notifications.

With --stdio it reads one JSON-RPC message per line on stdin and writes one
response per line on stdout, for both persistent and per_event harnesses.
Logs go to stderr. Without --policy the built-in library decides.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd.Flags(), configPath, os.Environ)
			if err != nil {
				return err
			}
			if !cfg.Stdio {
				return errors.New("choose a binding: --stdio")
			}
			log, err := newLogger(os.Stderr, cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			eng, err := startEngine(ctx, cfg, log)
			if err != nil {
				return err
			}
			srv := &transport.Server{Interceptor: eng, Observer: logObserver{log}, Logger: log}
			stdio := &transport.Stdio{Server: srv, MaxMessageBytes: cfg.MaxMessageBytes, Concurrency: cfg.Concurrency}
			log.Debug("serving on stdio", "revision", eng.Snapshot().Revision)
			if err := stdio.Serve(ctx, os.Stdin, os.Stdout); err != nil {
				return err
			}
			if ctx.Err() != nil {
				log.Info("stopped by signal")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().Bool("stdio", false, "serve the stdio binding on stdin/stdout")
	addEngineFlags(cmd.Flags())
	cmd.Flags().Int("max-message-bytes", transport.DefaultMaxMessageBytes, "largest message accepted on one line")
	cmd.Flags().Int("concurrency", 2, "requests decided at once")
	return cmd
}

// addEngineFlags declares the flags every command that decides shares.
func addEngineFlags(fs *pflag.FlagSet) {
	fs.StringSlice("policy", nil, "Rego `path` (.rego file or directory), repeatable; default: the built-in library")
	fs.Bool("with-builtin", false, "serve the built-in library alongside --policy")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("log-format", "auto", "auto (text on a terminal, JSON otherwise), text or json")
	fs.Duration("eval-timeout", engine.DefaultEvalTimeout, "deadline for one policy evaluation")
}

// loadPolicy loads what the configuration names: the user's policy paths,
// the built-in library when there are none or when with_builtin is set.
func loadPolicy(cfg Config) (*bundles.Policy, error) {
	var parts []*bundles.Policy
	if len(cfg.Policy) == 0 || cfg.WithBuiltin {
		p, err := bundles.Builtin()
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	if len(cfg.Policy) > 0 {
		p, err := bundles.Load(cfg.Policy)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return bundles.Merge(parts...)
}

// startEngine loads the configured policy into a new engine.
func startEngine(ctx context.Context, cfg Config, log *slog.Logger) (*engine.Engine, error) {
	p, err := loadPolicy(cfg)
	if err != nil {
		return nil, err
	}
	eng := engine.New(engine.Options{EvalTimeout: cfg.EvalTimeout, Logger: log})
	if err := eng.Load(ctx, p); err != nil {
		return nil, fmt.Errorf("policy revision %s: %w", p.Revision, err)
	}
	log.Info("policy loaded", "revision", p.Revision, "modules", len(p.Modules), "rules", eng.Snapshot().Rules)
	return eng, nil
}

// logObserver records notifications in the debug log. Observations are
// best effort and never answered (B-OBS-1).
type logObserver struct{ log *slog.Logger }

func (o logObserver) Observe(ctx context.Context, ob *transport.Observation) {
	if ob.Problem != "" {
		o.log.DebugContext(ctx, "invalid notification dropped", "method", ob.Method, "problem", ob.Problem)
		return
	}
	typ, _ := ob.Event["type"].(string)
	id, _ := ob.Event["id"].(string)
	o.log.DebugContext(ctx, "observed", "type", typ, "event", id)
}
