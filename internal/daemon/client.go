package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// Errors a client branches on.
var (
	// ErrVersion: the daemon is another build (it leaves; start a new one).
	ErrVersion = errors.New("daemon: daemon is another version")
	// ErrRefused: the daemon does not serve this user.
	ErrRefused = errors.New("daemon: refused by the daemon")
	// ErrNotStarted: no daemon answered after a start.
	ErrNotStarted = errors.New("daemon: started daemon did not answer")
	// ErrPeer: the socket is answered by a process of another user, or
	// one whose user cannot be learnt. Nothing is sent to it, and no
	// daemon is started in its place: the hook decides without one.
	ErrPeer = errors.New("daemon: socket not answered by this user")
)

// DefaultHookTimeout is ahp-opa-hook's own deadline for one answer
// (--timeout): the same as `ahp-opa hook`'s, below the 10 s an agent gets
// registered by default, so the hook answers, a deny if need be, before
// the agent gives up on it.
const DefaultHookTimeout = adapters.DefaultTimeout

// DefaultStartTimeout bounds the wait for a freshly started daemon, which
// has to load and compile the policy before it listens.
const DefaultStartTimeout = 10 * time.Second

// Starter launches a daemon process and returns a channel that yields
// its exit, so a client stops waiting for one that died.
type Starter func(ctx context.Context) (exited <-chan error, err error)

// Client asks the daemon for answers, starting it when none is running.
type Client struct {
	Paths Paths
	// Version is the Identity of the ahp-opa binary the client starts
	// daemons from (default SelfIdentity()): a daemon of another build
	// leaves for a new one.
	Version string
	Start   Starter
	// StartTimeout bounds the wait for a started daemon (default
	// DefaultStartTimeout).
	StartTimeout time.Duration
}

// Hook returns the daemon's answer to one payload. When no daemon answers
// (none running, a stale socket, another version) it takes the start lock,
// so among many racing hooks exactly one starts a daemon and the others
// use it, then asks again.
func (c *Client) Hook(ctx context.Context, req Request) (adapters.Answer, error) {
	// A request the daemon would refuse unread is not worth a daemon start
	// (nor a wait for an answer that never comes).
	if err := req.check(); err != nil {
		return adapters.Answer{}, err
	}
	ans, err := c.ask(ctx, req)
	if err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrPeer) || ctx.Err() != nil || c.Start == nil {
		return ans, err
	}
	first := err
	lock, err := LockFile(ctx, c.Paths.Start, true)
	if err != nil {
		return ans, fmt.Errorf("%w; then %w", first, err)
	}
	defer UnlockFile(lock)
	// Whoever held the lock before us may have started one already.
	if ans, err := c.ask(ctx, req); err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrPeer) {
		return ans, err
	}
	exited, err := c.Start(ctx)
	if err != nil {
		return ans, fmt.Errorf("%w; starting a daemon: %w", first, err)
	}
	timeout := c.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	delay := time.Millisecond
	for {
		ans, err := c.ask(ctx, req)
		if err == nil || errors.Is(err, ErrRefused) || errors.Is(err, ErrPeer) {
			return ans, err
		}
		select {
		case werr := <-exited:
			// One last try: a daemon that lost a race exits at once while
			// the winner serves.
			if ans, err := c.ask(ctx, req); err == nil {
				return ans, nil
			}
			return ans, fmt.Errorf("%w: it exited (%v)", ErrNotStarted, werr)
		case <-deadline.C:
			return ans, fmt.Errorf("%w within %s: %w", ErrNotStarted, timeout, err)
		case <-ctx.Done():
			return ans, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 25*time.Millisecond)
	}
}

// ask makes one round trip.
func (c *Client) ask(ctx context.Context, r Request) (adapters.Answer, error) {
	if err := ctx.Err(); err != nil {
		return adapters.Answer{}, err
	}
	conn, err := dial(c.Paths.Socket)
	if err != nil {
		return adapters.Answer{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	version := c.Version
	if version == "" {
		version = SelfIdentity()
	}
	werr := writeRequest(conn, request{Version: version, Request: r})
	// A daemon that refuses answers before reading, so a failed write may
	// still have a response waiting.
	resp, err := readResponse(bufio.NewReader(conn))
	if err != nil {
		if werr != nil {
			return adapters.Answer{}, werr
		}
		return adapters.Answer{}, err
	}
	if werr != nil && resp.Status == StatusOK {
		return adapters.Answer{}, werr
	}
	switch resp.Status {
	case StatusVersion:
		return adapters.Answer{}, fmt.Errorf("%w (daemon %q, client %q)", ErrVersion, resp.Answer.Stderr, version)
	case StatusRefused:
		return adapters.Answer{}, ErrRefused
	}
	return resp.Answer, nil
}

// Spawn returns a Starter that runs exe with args as a daemon, with the
// environment env (nil: this process's) in the directory dir: in its own
// session (no terminal signals), stdin and stdout on /dev/null so no agent
// waits on a pipe the daemon holds, stderr appended to logPath, which is
// first rotated when over MaxLogBytes (the daemon keeps it capped too).
func Spawn(exe string, args, env []string, dir, logPath string) Starter {
	return func(ctx context.Context) (<-chan error, error) {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		defer null.Close()
		RotateLog(logPath, MaxLogBytes) // best effort: a failure leaves the old log growing, no worse
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("daemon log: %w", err)
		}
		defer logf.Close()
		cmd := exec.Command(exe, args...) // not tied to ctx: the daemon outlives this hook
		cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, logf
		cmd.Env, cmd.Dir = env, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return exited, nil
	}
}
