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

	"github.com/ahp-opa/ahp-opa/audit"
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
			aud, err := startAudit(ctx, cfg.Audit, log)
			if err != nil {
				return err
			}
			defer aud.Close() // after serving: what is queued gets written
			srv := &transport.Server{Interceptor: aud.Interceptor(eng), Observer: aud.Observer(), Logger: log}
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
	cmd.Flags().String("audit-log", "", "append audit records (JSONL) to `file`; SIGHUP reopens it")
	return cmd
}

// startAudit starts the auditor, with its log file when one is configured.
// SIGHUP reopens the file for external log rotation. The auditor stops with
// ctx's process: the caller closes it.
func startAudit(ctx context.Context, cfg audit.Config, log *slog.Logger) (*audit.Auditor, error) {
	var (
		out  audit.Writer
		file *audit.File
	)
	if cfg.File.Path != "" {
		var err error
		if file, err = audit.OpenFile(cfg.File); err != nil {
			return nil, err
		}
		out = file
	}
	aud, err := audit.New(cfg, out, nil, log)
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

