package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/daemon/server"
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
			cfg, err := loadConfig(withoutFlags(cmd.Flags(), "socket", "idle-timeout"), configPath, os.Environ)
			if err != nil {
				return err
			}
			log, err := newLogger(cmd.ErrOrStderr(), cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			warm := &warmDecisions{ctx: ctx, cfg: cfg, log: log}
			defer warm.Close()
			srv := &server.Server{
				Paths:       daemon.PathsAt(socket),
				IdleTimeout: idle,
				Logger:      log,
				Hooker:      warm,
			}
			switch err := srv.Serve(ctx); {
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

// warmDecisions is the daemon's decision stack: serve's (startDecisions),
// started on the first request and kept for the daemon's life, so that
// native payloads and AHP messages share one engine, audit log and set of
// session facts. A start that fails is tried again on the next request: a
// fixed policy then takes effect without restarting the daemon.
type warmDecisions struct {
	ctx context.Context // the daemon's life
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	dec      *decisions
	stdio    *transport.Stdio
	err      error
	starting chan struct{} // closed when the start under way ends
	closed   bool
}

// Hook implements server.Hooker.
func (w *warmDecisions) Hook(ctx context.Context, req daemon.Request) adapters.Answer {
	if req.Agent == daemon.AgentAHP {
		return w.answerAHP(ctx, req.Payload)
	}
	return adapters.Run(ctx, warmHook{w}, req.Agent, req.Payload, adapters.Options{
		FailOpen: req.FailOpen || w.cfg.Hook.FailOpen, Timeout: w.cfg.Hook.Timeout, Logger: w.log, Inline: true,
	})
}

// answerAHP answers one AHP message line with the stdio binding itself:
// the reply is the bytes serve --stdio writes. A non-zero exit tells the
// client to ask serve instead.
func (w *warmDecisions) answerAHP(ctx context.Context, line []byte) adapters.Answer {
	_, stdio, err := w.get(ctx)
	if err != nil {
		return adapters.Answer{Stderr: err.Error(), Exit: 1}
	}
	var out bytes.Buffer
	// Not cancelled: a line handed over is answered (the evaluation has its
	// own deadline), never dropped as serve drops lines not yet read.
	if err := stdio.Serve(context.WithoutCancel(ctx), bytes.NewReader(line), &out); err != nil {
		return adapters.Answer{Stderr: err.Error(), Exit: 1}
	}
	return adapters.Answer{Stdout: out.Bytes()}
}

// get returns the stack, starting it if need be. It returns when ctx ends
// even while the policy is still compiling.
func (w *warmDecisions) get(ctx context.Context) (*decisions, *transport.Stdio, error) {
	w.mu.Lock()
	if w.dec != nil || w.closed {
		defer w.mu.Unlock()
		return w.dec, w.stdio, w.stateErr()
	}
	if w.starting == nil {
		done := make(chan struct{})
		w.starting = done
		go func() {
			defer close(done)
			dec, err := w.start()
			w.mu.Lock()
			defer w.mu.Unlock()
			w.starting = nil
			if err == nil && w.closed {
				dec.Close() // the daemon stopped while this compiled
				return
			}
			w.dec, w.err = dec, err
			if dec != nil {
				w.stdio = &transport.Stdio{Server: dec.Server, MaxMessageBytes: w.cfg.MaxMessageBytes}
			}
		}()
	}
	done := w.starting
	w.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("the decision daemon is still loading the policy: %w", ctx.Err())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dec, w.stdio, w.stateErr()
}

// stateErr is why there is no stack; w.mu is held.
func (w *warmDecisions) stateErr() error {
	switch {
	case w.dec != nil:
		return nil
	case w.closed:
		return errors.New("the decision daemon is stopping")
	case w.err != nil:
		return w.err
	}
	return errors.New("the decision daemon's policy is not loaded yet")
}

func (w *warmDecisions) start() (*decisions, error) {
	if w.cfg.Audit.File.Path == audit.Stdout {
		return nil, errors.New("configuration: audit.file.path \"-\" (standard output) cannot be used by the decision daemon, which has none (fix the configuration)")
	}
	// A remote bundle is waited for: a per_event harness or native hook
	// has no readiness probe, and the first answer should be a decision.
	dec, err := startDecisions(w.ctx, w.cfg, w.log, true)
	var pe policyLoadError
	if errors.As(err, &pe) {
		return nil, policyError(w.cfg, pe.err)
	}
	if err != nil {
		return nil, fmt.Errorf("%v (fix the configuration)", err)
	}
	return dec, nil
}

// Close stops the stack; a start still under way stops its own when done.
func (w *warmDecisions) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.dec != nil {
		w.dec.Close()
		w.dec = nil
	}
}

// warmHook decides native hook events through the stack, as serve's
// native HTTP hooks do.
type warmHook struct{ w *warmDecisions }

// Decide implements adapters.Decider.
func (h warmHook) Decide(ctx context.Context, ev *adapters.Event) (adapters.Decision, error) {
	dec, _, err := h.w.get(ctx)
	if err != nil {
		return adapters.Decision{}, err
	}
	return transport.HookDecider{Interceptor: dec.Server.Interceptor, Observer: dec.Server.Observer}.Decide(ctx, ev)
}

// Observe implements adapters.Observer.
func (h warmHook) Observe(ctx context.Context, ev *adapters.Event) error {
	dec, _, err := h.w.get(ctx)
	if err != nil {
		return err
	}
	return transport.HookDecider{Interceptor: dec.Server.Interceptor, Observer: dec.Server.Observer}.Observe(ctx, ev)
}
