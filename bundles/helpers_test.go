package bundles_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/bundles/remote"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// settle bounds every wait for a file-system event or a download; a
// healthy reload takes milliseconds plus the debounce.
const settle = 15 * time.Second

// testDebounce keeps the tests quick; the default is measured by the
// benchmarks.
const testDebounce = 40 * time.Millisecond

// rule is a policy file denying the tool named tool with reason.
func rule(pkg, tool, reason string) string {
	return fmt.Sprintf("package ahp.tool.before.%s\n\ndeny contains %q if input.tool.name == %q\n", pkg, reason, tool)
}

func put(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// decide decides an event held as Go values through Judge, as a binding
// does once the transport parsed it: the decision, and the error the
// harness gets, if any.
func decide(tb testing.TB, eng *engine.Engine, ev map[string]any) (engine.Decision, error) {
	tb.Helper()
	event, err := transport.EventOfMap(ev)
	if err != nil {
		tb.Fatal(err)
	}
	v := eng.Judge(context.Background(), &transport.InterceptRequest{Event: event, Effects: []string{ahp.EffectDeny}})
	if v.Err != nil {
		return v.Decision, v.Err
	}
	return v.Decision, nil
}

// isCode reports whether err is the JSON-RPC error code.
func isCode(err error, code int) bool {
	var rpc *transport.Error
	return errors.As(err, &rpc) && rpc.Code == code
}

// stand is an engine fed by a Reloader, with the reload events recorded.
type stand struct {
	t   testing.TB
	eng *engine.Engine
	rl  *bundles.Reloader

	mu     sync.Mutex
	events []bundles.Event
	seen   chan struct{} // signalled on every event
}

// newReloader is bundles.NewReloader with the remote bundles of opts.OPA
// downloaded by package remote, as the commands wire it.
func newReloader(target bundles.Activator, opts bundles.Options) (*bundles.Reloader, error) {
	rb, err := remote.New(opts.OPA, nil, opts.Limits)
	if err != nil {
		return nil, err
	}
	if rb != nil {
		opts.Remote = rb
	}
	return bundles.NewReloader(target, opts)
}

// newStand starts a reloader over opts; it fails the test when Start does.
func newStand(t testing.TB, opts bundles.Options) *stand {
	t.Helper()
	s, err := tryStand(t, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s
}

func tryStand(t testing.TB, opts bundles.Options) (*stand, error) {
	t.Helper()
	// A generous deadline: on a loaded machine an evaluation can wait for
	// the CPU, and the tests check answers, not evaluation time.
	eng := engine.New(engine.Options{EvalTimeout: settle})
	s := &stand{t: t, eng: eng, seen: make(chan struct{}, 1)}
	opts.OnReload = func(ev bundles.Event) {
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
		select {
		case s.seen <- struct{}{}:
		default:
		}
	}
	if opts.Debounce == 0 {
		opts.Debounce = testDebounce
	}
	rl, err := newReloader(s.eng, opts)
	if err != nil {
		return nil, err
	}
	s.rl = rl
	if err := rl.Start(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(rl.Stop)
	return s, nil
}

// reasons decides an event for tool and returns the deny reasons, sorted;
// it fails the test on an error.
func (s *stand) reasons(tool string) []string {
	s.t.Helper()
	got, err := s.tryReasons(tool)
	if err != nil {
		s.t.Fatalf("Decide(%s): %v", tool, err)
	}
	return got
}

func (s *stand) tryReasons(tool string) ([]string, error) {
	d, err := decide(s.t, s.eng, testkit.ToolEvent(testkit.NativeTool(tool, nil)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range d.Matches {
		out = append(out, m.Reason)
	}
	slices.Sort(out)
	return out, nil
}

// waitReasons polls until tool gets exactly want; before the first
// activation it keeps waiting.
func (s *stand) waitReasons(tool string, want ...string) {
	s.t.Helper()
	deadline := time.Now().Add(settle)
	for {
		got, err := s.tryReasons(tool)
		if err != nil && !isCode(err, ahp.CodeBackendUnavailable) {
			s.t.Fatalf("Decide(%s): %v", tool, err)
		}
		if err == nil && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: reasons %q, want %q after %s\nevents:\n%s", tool, got, want, settle, s.eventLog())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// count returns how many events had outcome o.
func (s *stand) count(o bundles.Outcome) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ev := range s.events {
		if ev.Outcome == o {
			n++
		}
	}
	return n
}

// waitEvent waits for an event with outcome o beyond the first after of
// them, and returns it.
func (s *stand) waitEvent(o bundles.Outcome, after int) bundles.Event {
	s.t.Helper()
	n := 0
	return s.waitMatch(fmt.Sprintf("%s event #%d", o, after+1), func(ev bundles.Event) bool {
		if ev.Outcome != o {
			return false
		}
		n++
		return n > after
	})
}

// waitMatch waits for an event that match accepts; match sees every event
// in order, once.
func (s *stand) waitMatch(what string, match func(bundles.Event) bool) bundles.Event {
	s.t.Helper()
	timer := time.NewTimer(settle)
	defer timer.Stop()
	next := 0
	for {
		s.mu.Lock()
		for ; next < len(s.events); next++ {
			if ev := s.events[next]; match(ev) {
				s.mu.Unlock()
				return ev
			}
		}
		s.mu.Unlock()
		select {
		case <-s.seen:
		case <-timer.C:
			s.t.Fatalf("no %s within %s\nevents:\n%s", what, settle, s.eventLog())
		}
	}
}

func (s *stand) eventLog() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, ev := range s.events {
		fmt.Fprintf(&b, "  %s %s rev=%s files=%v err=%v\n", ev.Outcome, ev.Source, ev.Revision, ev.Files, ev.Err)
	}
	return b.String()
}
