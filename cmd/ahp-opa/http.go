package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/metrics"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/transport"
)

// minTokenBytes is the length below which a token draws a warning: it can
// be guessed by brute force over the network.
const minTokenBytes = 16

// addHTTPFlags declares the flags of the HTTP binding.
func addHTTPFlags(fs *pflag.FlagSet) {
	d := config.DefaultHTTP()
	fs.String("http", "", "serve the HTTP binding on `addr` (host:port), endpoint POST /ahp")
	fs.String("token-file", "", "read the bearer token from `file`")
	fs.String("token-env", d.TokenEnv, "read the bearer token from this environment `variable`")
	fs.Bool("allow-insecure-no-auth", false,
		"DANGEROUS: serve a non-loopback address without a bearer token; anyone who can reach it can query the policy")
	fs.String("tls-cert", "", "serve HTTPS with this PEM certificate `file` (reloaded when it changes)")
	fs.String("tls-key", "", "PEM private key `file` for --tls-cert")
	fs.Int64("max-body-bytes", d.MaxBodyBytes, "largest HTTP request body accepted (413 above)")
	fs.Int("http-concurrency", 0, "HTTP evaluations at once; 0 means twice the number of CPUs")
	fs.Duration("http-queue-wait", d.HTTPQueueWait, "how long an HTTP request waits for an evaluation slot before -32003")
	fs.Duration("http-read-timeout", d.HTTPReadTimeout, "deadline for reading one HTTP request")
	fs.Duration("http-write-timeout", d.HTTPWriteTimeout, "deadline for answering one HTTP request")
	fs.Duration("http-idle-timeout", d.HTTPIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.Duration("shutdown-timeout", d.ShutdownTimeout, "on SIGTERM, how long requests in flight may take to finish")
	fs.Duration("drain-delay", 0, "on SIGTERM, how long to go on answering with /readyz failing before the listener closes (behind a load balancer)")
}

// httpBinding is a configured, listening HTTP binding waiting for its
// engine.
type httpBinding struct {
	cfg   config.HTTPConfig
	token string
	tls   *transport.CertReloader
	ln    net.Listener
	log   *slog.Logger
}

// prepareHTTP checks the HTTP configuration, reads the token and the
// certificate and starts listening, so that every mistake shows before the
// policy is compiled. It returns nil when no HTTP binding is configured.
func prepareHTTP(cfg config.HTTPConfig, getenv func(string) string, log *slog.Logger) (*httpBinding, error) {
	if cfg.HTTP == "" {
		return nil, nil
	}
	b := &httpBinding{cfg: cfg, log: log}
	var err error
	if b.token, err = loadToken(cfg, getenv, log); err != nil {
		return nil, err
	}
	if err := checkExposure(cfg, b.token != "", log); err != nil {
		return nil, err
	}
	if cfg.TLSCert != "" {
		if b.tls, err = transport.NewCertReloader(cfg.TLSCert, cfg.TLSKey, log); err != nil {
			return nil, err
		}
	}
	if b.ln, err = net.Listen("tcp", cfg.HTTP); err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	return b, nil
}

// Close releases the listener of a binding that will not serve.
func (b *httpBinding) Close() {
	if b != nil {
		b.ln.Close()
	}
}

// binding returns the transport for srv; ready drives /readyz.
func (b *httpBinding) binding(srv *transport.Server, ready func() bool, m *metrics.Metrics) *transport.HTTP {
	h := &transport.HTTP{
		Server:          srv,
		Token:           b.token,
		MaxBodyBytes:    b.cfg.MaxBodyBytes,
		Concurrency:     b.cfg.HTTPConcurrency,
		QueueWait:       b.cfg.HTTPQueueWait,
		Ready:           ready,
		Metrics:         m.Handler(),
		Recorder:        m,
		ReadTimeout:     b.cfg.HTTPReadTimeout,
		WriteTimeout:    b.cfg.HTTPWriteTimeout,
		IdleTimeout:     b.cfg.HTTPIdleTimeout,
		ShutdownTimeout: b.cfg.ShutdownTimeout,
		DrainDelay:      b.cfg.DrainDelay,
		Logger:          b.log,
	}
	if b.cfg.HTTPQueueWait == 0 {
		h.QueueWait = -1 // configured as no wait at all
	}
	if b.tls != nil {
		h.TLSConfig = b.tls.TLSConfig()
	}
	return h
}

// serve runs h until ctx is done.
func (b *httpBinding) serve(ctx context.Context, h *transport.HTTP) error {
	scheme := "http"
	if b.tls != nil {
		scheme = "https"
	}
	b.log.Info("http: listening", "addr", b.ln.Addr().String(), "url", scheme+"://"+b.ln.Addr().String()+transport.DefaultHTTPPath,
		"auth", b.token != "", "tls", b.tls != nil)
	return h.Serve(ctx, b.ln)
}

// loadToken reads the bearer token from token_file, or else from the
// environment variable named by token_env. "" means no token. Errors and
// logs never include the token.
func loadToken(cfg config.HTTPConfig, getenv func(string) string, log *slog.Logger) (string, error) {
	fromEnv := ""
	if cfg.TokenEnv != "" {
		fromEnv = strings.TrimSpace(getenv(cfg.TokenEnv))
	}
	if cfg.TokenFile == "" {
		return fromEnv, checkToken(fromEnv, "environment variable "+cfg.TokenEnv, log)
	}
	if fromEnv != "" {
		return "", fmt.Errorf("configuration: both token_file and the environment variable %s hold a token; keep one", cfg.TokenEnv)
	}
	fi, err := os.Stat(cfg.TokenFile)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the token file can be read by other users; chmod 600 it", "file", cfg.TokenFile, "mode", fi.Mode().Perm().String())
	}
	// A token is short: 64 KiB is far past any real one, and a FIFO or
	// /dev/zero named by mistake is refused instead of hanging or growing.
	data, err := pathread.Read(cfg.TokenFile, pathread.Limits{MaxBytes: 64 << 10})
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", cfg.TokenFile)
	}
	return tok, checkToken(tok, "token file "+cfg.TokenFile, log)
}

// checkToken refuses a token that no client could send in a header.
func checkToken(tok, from string, log *slog.Logger) error {
	if tok == "" {
		return nil
	}
	for _, r := range tok {
		if r > unicode.MaxASCII || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("the bearer token from %s holds whitespace, control or non-ASCII characters", from)
		}
	}
	if len(tok) < minTokenBytes {
		log.Warn("the bearer token is short and can be guessed; use at least 32 random characters", "from", from)
	}
	return nil
}

// checkExposure refuses to serve a non-loopback address without a token,
// unless the operator said so explicitly, and warns about plain HTTP off
// loopback (B-HTTP-6).
func checkExposure(cfg config.HTTPConfig, hasToken bool, log *slog.Logger) error {
	loopback, err := isLoopback(cfg.HTTP)
	if err != nil {
		return err
	}
	if loopback {
		return nil
	}
	if !hasToken {
		if !cfg.AllowInsecureNoAuth {
			return fmt.Errorf("refusing to serve %s without a bearer token: it is not a loopback address. "+
				"Set --token-file or the environment variable named by --token-env (default %s), "+
				"or pass --allow-insecure-no-auth if something in front of ahp-opa authenticates", cfg.HTTP, config.DefaultTokenEnv)
		}
		log.Warn("WARNING: INSECURE: serving a non-loopback address WITHOUT AUTHENTICATION " +
			"(--allow-insecure-no-auth). Anyone who can reach it can submit events and read decisions.")
	}
	if cfg.TLSCert == "" {
		log.Warn("WARNING: serving plain HTTP on a non-loopback address: events and the bearer token travel "+
			"unencrypted. Use --tls-cert/--tls-key or terminate TLS in front of ahp-opa (B-HTTP-6).", "addr", cfg.HTTP)
	}
	return nil
}

// isLoopback reports whether a listen address only accepts local
// connections. An empty host listens everywhere; host names other than
// localhost count as non-loopback, since what they resolve to may change.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("configuration: http address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback(), nil
}

// serveBindings runs the configured bindings on one server until ctx is
// done or one of them stops; then it stops the other. Stdin closing thus
// ends the process even when HTTP is served too: the harness that started
// it is gone.
func serveBindings(ctx context.Context, log *slog.Logger, stdio *transport.Stdio, b *httpBinding, h *transport.HTTP) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg             sync.WaitGroup
		stdioErr, hErr error
	)
	if stdio != nil {
		wg.Go(func() {
			defer cancel()
			stdioErr = stdio.Serve(ctx, os.Stdin, os.Stdout)
			if ctx.Err() == nil && h != nil {
				log.Info("stdin closed; stopping the HTTP binding too")
			}
		})
	}
	if h != nil {
		wg.Go(func() {
			defer cancel()
			hErr = b.serve(ctx, h)
		})
	}
	wg.Wait()
	return errors.Join(stdioErr, hErr)
}
