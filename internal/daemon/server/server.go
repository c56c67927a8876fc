// Package server is the per-user decision daemon: one warm engine behind a
// Unix socket that the ahp-opa-hook client (package daemon) asks. It is
// apart from the client so that the client does not link the net package,
// whose cgo resolver would make the hook binary load libc at every start.
package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
)

// Hooker answers one native hook payload. The cmd wiring implements it
// with the adapters over the engine; it must answer (fail closed) rather
// than fail.
type Hooker interface {
	Hook(ctx context.Context, req daemon.Request) adapters.Answer
}

// HookerFunc adapts a function to Hooker.
type HookerFunc func(ctx context.Context, req daemon.Request) adapters.Answer

// Hook calls f.
func (f HookerFunc) Hook(ctx context.Context, req daemon.Request) adapters.Answer { return f(ctx, req) }

// Defaults for Server.
const (
	DefaultIdleTimeout = 15 * time.Minute
	// DefaultLifeWait is how long a new daemon waits for the one it replaces
	// to finish its in-flight requests and leave.
	DefaultLifeWait = 5 * time.Second
	requestTimeout  = 30 * time.Second
)

// Why a daemon stopped serving.
var (
	ErrIdle         = errors.New("daemon: idle timeout")
	ErrReplaced     = errors.New("daemon: a client of another version asked for a new daemon")
	ErrAlreadyThere = errors.New("daemon: another daemon holds the life lock")
)

// Server is one daemon.
type Server struct {
	Paths   daemon.Paths
	Version string // defaults to daemon.SelfIdentity()
	Hooker  Hooker
	// IdleTimeout ends the daemon after this long without a request
	// (default DefaultIdleTimeout; negative never).
	IdleTimeout time.Duration
	// LifeWait bounds the wait for a previous daemon to leave (default
	// DefaultLifeWait).
	LifeWait time.Duration
	// PeerUID reads a connection's peer uid (default the kernel's
	// SO_PEERCRED); tests inject it to play another user.
	PeerUID func(*net.UnixConn) (int, error)
	Logger  *slog.Logger
	// Listening, if set, is called once the socket accepts connections.
	Listening func()
	// MaxLogBytes caps Paths.Log when it is the daemon's stderr (default
	// daemon.MaxLogBytes).
	MaxLogBytes int64
}

func (s *Server) maxLog() int64 {
	if s.MaxLogBytes > 0 {
		return s.MaxLogBytes
	}
	return daemon.MaxLogBytes
}

// Serve runs the daemon until ctx ends, it is idle for IdleTimeout, or a
// client of another version asks for a replacement. It returns nil on a
// cancelled ctx and ErrIdle or ErrReplaced otherwise.
func (s *Server) Serve(ctx context.Context) error {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := s.Version
	if version == "" {
		version = daemon.SelfIdentity()
	}
	peer := s.PeerUID
	if peer == nil {
		peer = PeerUID
	}
	wait := s.LifeWait
	if wait <= 0 {
		wait = DefaultLifeWait
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	life, err := daemon.LockFile(lctx, s.Paths.Life, true)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w (%s)", ErrAlreadyThere, s.Paths.Life)
		}
		return err
	}
	defer daemon.UnlockFile(life)
	// Holding the life lock, any socket file left there belongs to a dead
	// daemon: remove it rather than fail on "address in use".
	if err := os.Remove(s.Paths.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("daemon: removing stale socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.Paths.Socket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("daemon: listen: %w", err)
	}
	ln.SetUnlinkOnClose(false) // removed below, while the life lock is still held
	if err := os.Chmod(s.Paths.Socket, 0o600); err != nil {
		ln.Close()
		os.Remove(s.Paths.Socket)
		return fmt.Errorf("daemon: socket mode: %w", err)
	}
	log.Info("daemon listening", "socket", s.Paths.Socket, "version", version)
	if s.Listening != nil {
		s.Listening()
	}

	st := &state{idle: s.IdleTimeout, stop: make(chan error, 1)}
	if st.idle == 0 {
		st.idle = DefaultIdleTimeout
	}
	st.arm()
	var conns sync.WaitGroup
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	capLog(2, s.Paths.Log, s.maxLog())
	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return // listener closed
			}
			// Here, in the one accepting goroutine: two syscalls per
			// request, and never two rotations at once.
			capLog(2, s.Paths.Log, s.maxLog())
			conns.Add(1)
			go func() {
				defer conns.Done()
				s.serveConn(reqCtx, c, version, peer, st, log)
			}()
		}
	}()

	var why error
	select {
	case <-ctx.Done():
	case why = <-st.stop:
	}
	ln.Close()
	os.Remove(s.Paths.Socket)
	conns.Wait() // in-flight hooks get their answers
	reason := "asked to stop"
	if why != nil {
		reason = why.Error()
	}
	log.Info("daemon stopped", "reason", reason)
	return why
}

// state tracks activity for the idle timer and carries the stop reason.
type state struct {
	mu     sync.Mutex
	active int
	idle   time.Duration
	timer  *time.Timer
	gen    int // invalidates a timer that fired while a request started
	stop   chan error
}

func (st *state) arm() {
	if st.idle < 0 {
		return
	}
	st.gen++
	gen := st.gen
	st.timer = time.AfterFunc(st.idle, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.active == 0 && st.gen == gen {
			st.signal(ErrIdle)
		}
	})
}

func (st *state) begin() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.active++
	st.gen++
	if st.timer != nil {
		st.timer.Stop()
	}
}

func (st *state) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.active--
	if st.active == 0 {
		st.arm()
	}
}

func (st *state) signal(why error) {
	select {
	case st.stop <- why:
	default:
	}
}

func (s *Server) serveConn(ctx context.Context, c *net.UnixConn, version string, peer func(*net.UnixConn) (int, error), st *state, log *slog.Logger) {
	defer c.Close()
	st.begin()
	defer st.end()
	c.SetDeadline(time.Now().Add(requestTimeout))
	uid, err := peer(c)
	if err != nil || uid != os.Getuid() {
		log.Warn("refused a connection from another user", "peer_uid", uid, "err", err)
		daemon.WriteResponse(c, daemon.StatusRefused, adapters.Answer{Stderr: "peer is not the daemon's user"})
		return
	}
	clientVersion, req, err := daemon.ReadRequest(bufio.NewReader(c))
	if err != nil {
		log.Warn("bad request", "err", err)
		return
	}
	if clientVersion != version {
		log.Info("client of another version: leaving for a new daemon", "client", clientVersion, "daemon", version)
		daemon.WriteResponse(c, daemon.StatusVersion, adapters.Answer{Stderr: version})
		st.signal(ErrReplaced)
		return
	}
	hctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ans := s.Hooker.Hook(hctx, req)
	if err := daemon.WriteResponse(c, daemon.StatusOK, ans); err != nil {
		log.Warn("writing an answer", "err", err)
	}
}
