package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/daemon/server"
	"github.com/ahp-opa/ahp-opa/internal/service"
	"github.com/ahp-opa/ahp-opa/transport"
)

// daemonCommand runs the per-user decision daemon that ahp-opa-hook starts
// on first use: one warm engine answering native hook payloads on a Unix
// socket, so a tool call costs a connection instead of a policy compile.
func daemonCommand() *cobra.Command {
	var (
		configPath, socket string
		idle               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "daemon --socket PATH [--policy PATH]... [--with-builtin] [--config FILE] [--idle-timeout D]",
		Short: "Serve native hook decisions on a Unix socket (started by ahp-opa-hook)",
		Long: `Daemon keeps one engine warm for ahp-opa-hook. It listens on --socket
(mode 0600, in a 0700 directory; a peer of another uid is refused), answers
each native payload as 'ahp-opa hook' would and each AHP message (ahp-opa-hook
ahp) as 'ahp-opa serve --stdio' would, through the same engine, audit log and
session facts, reloads the policy when its files change, and exits after
--idle-timeout without a request, on SIGTERM, or when a hook of another
version asks for a replacement.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket == "" {
				return errors.New("--socket is required")
			}
			src := config.Source{Flags: withoutFlags(cmd.Flags(), "socket", "idle-timeout"), Path: configPath, Environ: os.Environ}
			cfg, err := src.Load()
			if err != nil {
				return err
			}
			if cfg.Audit.File.Path == audit.Stdout {
				return errors.New("configuration: audit.file.path \"-\" (standard output) cannot be used by the decision daemon, which has none (fix the configuration)")
			}
			log, err := newLogger(cmd.ErrOrStderr(), cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// An edit of a setting the daemon applies only at its start
			// (hook.*, audit.*, log_*…) makes it leave once the requests
			// under way are answered: the next hook starts a daemon that
			// reads the file as it now is, as the in-process fallback does.
			// Only the server stops: the service answers the requests under
			// way until it is closed after them.
			serveCtx, leave := context.WithCancel(ctx)
			defer leave()
			restart := func(keys []string) {
				log.Warn("the configuration changed settings a daemon reads only at its start; leaving for a new daemon", "keys", keys)
				leave()
			}
			// serve's stack, started on the first request and kept for the
			// daemon's life, following its configuration file and policy
			// sources as serve does, even with watch: false (no one
			// restarts a daemon after an edit). A remote bundle is waited for: a
			// per_event harness or native hook has no readiness probe, and
			// the first answer should be a decision.
			svc, err := service.New(ctx, cfg, service.Options{
				Logger: log, Watch: true, Follow: true, Restart: restart, WaitRemote: true, Lazy: true,
				Metrics: true, AuditLog: true, DecisionLogs: true, Canary: true, Source: src,
			})
			if err != nil {
				return err
			}
			defer svc.Close()
			warm := &warmDecisions{svc: svc, cfg: cfg, log: log,
				stdio: &transport.Stdio{Server: svc.Server, MaxMessageBytes: cfg.MaxMessageBytes}}
			srv := &server.Server{
				Paths:       daemon.PathsAt(socket),
				IdleTimeout: idle,
				Logger:      log,
				Hooker:      warm,
			}
			switch err := srv.Serve(serveCtx); {
			case err == nil, errors.Is(err, server.ErrIdle), errors.Is(err, server.ErrReplaced):
				log.Info("decision daemon stopped", "why", fmt.Sprint(err))
				return nil
			default:
				return err
			}
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML configuration `file`")
	cmd.Flags().StringVar(&socket, "socket", "", "Unix socket `path` to listen on")
	cmd.Flags().DurationVar(&idle, "idle-timeout", server.DefaultIdleTimeout, "exit after this long without a request")
	addEngineFlags(cmd.Flags())
	return cmd
}

// warmDecisions answers the daemon's requests through its service, so
// that native payloads and AHP messages share one engine, audit log and
// set of session facts. A start that fails is tried again on the next
// request: a fixed policy then takes effect without restarting the daemon.
type warmDecisions struct {
	svc   *service.Service
	cfg   config.Config // as started: hook.* and max_message_bytes need a restart
	log   *slog.Logger
	stdio *transport.Stdio
}

// Hook implements server.Hooker.
func (w *warmDecisions) Hook(ctx context.Context, req daemon.Request) adapters.Answer {
	defer policyReady() // the first request started the stack
	if req.Agent == daemon.AgentAHP {
		return w.answerAHP(ctx, req.Payload)
	}
	return adapters.Run(ctx, serviceHook{w.svc, w.svc.Config()}, req.Agent, req.Payload, adapters.Options{
		FailOpen: req.FailOpen || w.cfg.Hook.FailOpen, Timeout: w.cfg.Hook.Timeout, Logger: w.log, Inline: true,
	})
}

// answerAHP answers one AHP message line with the stdio binding itself:
// the reply is the bytes serve --stdio writes. A non-zero exit tells the
// client to ask serve instead.
func (w *warmDecisions) answerAHP(ctx context.Context, line []byte) adapters.Answer {
	if err := startError(w.svc.Config(), w.svc.Start(ctx)); err != nil {
		return adapters.Answer{Stderr: err.Error(), Exit: 1}
	}
	var out bytes.Buffer
	// Not cancelled: a line handed over is answered (the evaluation has its
	// own deadline), never dropped as serve drops lines not yet read.
	if err := w.stdio.Serve(context.WithoutCancel(ctx), bytes.NewReader(line), &out); err != nil {
		return adapters.Answer{Stderr: err.Error(), Exit: 1}
	}
	return adapters.Answer{Stdout: out.Bytes()}
}
