package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
)

// echo answers with the agent and payload it got, so a test sees which
// daemon answered what.
func echo(tag string, calls *atomic.Int32) Hooker {
	return HookerFunc(func(_ context.Context, r daemon.Request) adapters.Answer {
		if calls != nil {
			calls.Add(1)
		}
		if r.FailOpen {
			tag += "(open)"
		}
		return adapters.Answer{Stdout: append([]byte(tag+":"+r.Agent+":"), r.Payload...), Stderr: "note", Exit: 3}
	})
}

// run starts s and returns once it listens; the returned channel yields
// Serve's result.
func run(t *testing.T, ctx context.Context, s *Server) <-chan error {
	t.Helper()
	listening := make(chan struct{})
	s.Listening = func() { close(listening) }
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("daemon did not start: %v", err)
	}
	return done
}

// starter starts in-process daemons built by mk and counts the starts.
func starter(t *testing.T, ctx context.Context, mk func() *Server, starts *atomic.Int32) daemon.Starter {
	return func(context.Context) (<-chan error, error) {
		starts.Add(1)
		done := make(chan error, 1)
		go func() { done <- mk().Serve(ctx) }()
		return done, nil
	}
}

func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not stop")
		return nil
	}
}

func TestRoundTrip(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	done := run(t, ctx, &Server{Paths: p, Version: "v1", Hooker: echo("d", nil)})
	fi, err := os.Stat(p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("socket mode %04o, want 0600", got)
	}
	c := &daemon.Client{Paths: p, Version: "v1"}
	ans, err := c.Hook(ctx, daemon.Request{Agent: "codex", Payload: []byte(`{"x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := adapters.Answer{Stdout: []byte(`d:codex:{"x":1}`), Stderr: "note", Exit: 3}
	if !bytes.Equal(ans.Stdout, want.Stdout) || ans.Stderr != want.Stderr || ans.Exit != want.Exit {
		t.Errorf("answer %+v, want %+v", ans, want)
	}
	cancel()
	if err := waitDone(t, done); err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestRaceOfFirstHooksStartsOneDaemon(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	var starts, calls atomic.Int32
	mk := func() *Server { return &Server{Paths: p, Version: "v1", Hooker: echo("d", &calls)} }
	c := &daemon.Client{Paths: p, Version: "v1", Start: starter(t, ctx, mk, &starts)}
	const hooks = 20
	var wg sync.WaitGroup
	errs := make(chan error, hooks)
	for i := range hooks {
		wg.Go(func() {
			payload := fmt.Sprintf("%d", i)
			ans, err := c.Hook(ctx, daemon.Request{Agent: "claude-code", Payload: []byte(payload)})
			if err == nil && string(ans.Stdout) != "d:claude-code:"+payload {
				err = fmt.Errorf("hook %d got %q", i, ans.Stdout)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := starts.Load(); n != 1 {
		t.Errorf("%d daemons started, want 1", n)
	}
	if n := calls.Load(); n != hooks {
		t.Errorf("%d hooks answered, want %d", n, hooks)
	}
}

func TestStaleSocketIsRecovered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"socket of a dead daemon", func(t *testing.T, path string) {
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close()
		}},
		{"plain file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			p := daemon.PathsFor(t.TempDir(), []string{"test"})
			tc.plant(t, p.Socket)
			var starts atomic.Int32
			mk := func() *Server { return &Server{Paths: p, Version: "v1", Hooker: echo("d", nil)} }
			c := &daemon.Client{Paths: p, Version: "v1", Start: starter(t, ctx, mk, &starts)}
			ans, err := c.Hook(ctx, daemon.Request{Agent: "cursor", Payload: []byte("p")})
			if err != nil {
				t.Fatal(err)
			}
			if string(ans.Stdout) != "d:cursor:p" || starts.Load() != 1 {
				t.Errorf("answer %q after %d starts", ans.Stdout, starts.Load())
			}
		})
	}
}

func TestVersionMismatchReplacesDaemon(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	var oldCalls atomic.Int32
	old := run(t, ctx, &Server{Paths: p, Version: "v1", Hooker: echo("old", &oldCalls)})
	var starts atomic.Int32
	mk := func() *Server { return &Server{Paths: p, Version: "v2", Hooker: echo("new", nil)} }
	c := &daemon.Client{Paths: p, Version: "v2", Start: starter(t, ctx, mk, &starts)}
	ans, err := c.Hook(ctx, daemon.Request{Agent: "gemini-cli", Payload: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	if string(ans.Stdout) != "new:gemini-cli:p" {
		t.Errorf("answer %q, want the new daemon's", ans.Stdout)
	}
	if err := waitDone(t, old); !errors.Is(err, ErrReplaced) {
		t.Errorf("old daemon ended with %v, want ErrReplaced", err)
	}
	if n := oldCalls.Load(); n != 0 {
		t.Errorf("old daemon decided %d payloads", n)
	}
	// A client of the old version that cannot start a daemon is now refused by the new daemon.
	if _, err := (&daemon.Client{Paths: p, Version: "v1"}).Hook(ctx, daemon.Request{Agent: "codex"}); !errors.Is(err, daemon.ErrVersion) {
		t.Errorf("old client against new daemon: %v, want daemon.ErrVersion", err)
	}
}

func TestIdleExit(t *testing.T) {
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	done := run(t, t.Context(), &Server{Paths: p, Version: "v1", Hooker: echo("d", nil), IdleTimeout: 50 * time.Millisecond})
	if _, err := (&daemon.Client{Paths: p, Version: "v1"}).Hook(t.Context(), daemon.Request{Agent: "copilot", Payload: nil}); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); !errors.Is(err, ErrIdle) {
		t.Errorf("Serve returned %v, want ErrIdle", err)
	}
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after idle exit: %v", err)
	}
}

func TestWrongUIDRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	var calls, starts atomic.Int32
	run(t, ctx, &Server{
		Paths: p, Version: "v1", Hooker: echo("d", &calls),
		PeerUID: func(*net.UnixConn) (int, error) { return os.Getuid() + 1, nil },
	})
	c := &daemon.Client{Paths: p, Version: "v1", Start: func(context.Context) (<-chan error, error) {
		starts.Add(1)
		return nil, errors.New("must not start")
	}}
	if _, err := c.Hook(ctx, daemon.Request{Agent: "claude-code", Payload: []byte("p")}); !errors.Is(err, daemon.ErrRefused) {
		t.Errorf("Hook: %v, want daemon.ErrRefused", err)
	}
	if calls.Load() != 0 || starts.Load() != 0 {
		t.Errorf("refused peer still got %d decisions, %d starts", calls.Load(), starts.Load())
	}
}

func TestPeerUIDIsOurs(t *testing.T) {
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("unix", p.Socket); err == nil {
			defer c.Close()
			bufio.NewReader(c).ReadByte()
		}
	}()
	c, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uid, err := PeerUID(c)
	if err != nil || uid != os.Getuid() {
		t.Errorf("PeerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}

func TestSecondDaemonDoesNotTakeOver(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := daemon.PathsFor(t.TempDir(), []string{"test"})
	run(t, ctx, &Server{Paths: p, Version: "v1", Hooker: echo("first", nil)})
	err := (&Server{Paths: p, Version: "v1", Hooker: echo("second", nil), LifeWait: 30 * time.Millisecond}).Serve(ctx)
	if !errors.Is(err, ErrAlreadyThere) {
		t.Errorf("second Serve: %v, want ErrAlreadyThere", err)
	}
	ans, err := (&daemon.Client{Paths: p, Version: "v1"}).Hook(ctx, daemon.Request{Agent: "codex", Payload: nil})
	if err != nil || string(ans.Stdout) != "first:codex:" {
		t.Errorf("after a second start: %q, %v", ans.Stdout, err)
	}
}

// BenchmarkRoundTrip is one hook call through the socket with a decision
// that costs nothing: the daemon's own overhead per call.
func BenchmarkRoundTrip(b *testing.B) {
	p := daemon.PathsFor(b.TempDir(), []string{"bench"})
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	listening := make(chan struct{})
	go (&Server{Paths: p, Version: "v1", Hooker: echo("d", nil), Listening: func() { close(listening) }}).Serve(ctx)
	<-listening
	c := &daemon.Client{Paths: p, Version: "v1"}
	payload := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	for b.Loop() {
		if _, err := c.Hook(ctx, daemon.Request{Agent: "claude-code", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}
