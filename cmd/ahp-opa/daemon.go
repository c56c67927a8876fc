package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/adapters"
	"github.com/ahp-opa/ahp-opa/daemon"
	"github.com/ahp-opa/ahp-opa/daemon/server"
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
each native payload as 'ahp-opa hook' would, reloads the policy when its files
change, and exits after --idle-timeout without a request, on SIGTERM, or when
a hook of another version asks for a replacement.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			serveGC()
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
			dec := &localDecider{cfg: cfg, log: log, watch: true}
			defer dec.Close()
			srv := &server.Server{
				Paths:       daemon.PathsAt(socket),
				IdleTimeout: idle,
				Logger:      log,
				Hooker: server.HookerFunc(func(ctx context.Context, req daemon.Request) adapters.Answer {
					return adapters.Run(ctx, dec, req.Agent, req.Payload, adapters.Options{
						FailOpen: req.FailOpen || cfg.Hook.FailOpen, Timeout: cfg.Hook.Timeout, Logger: log, Inline: true,
					})
				}),
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
