package testkit

import (
	"fmt"
	"runtime"
	"testing"
)

// fatalRecorder stands in for a test: Fatal and Fatalf record the failure
// and stop the goroutine, as the testing package does.
type fatalRecorder struct {
	testing.TB
	failure string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.failure = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failureOf runs check against a recorder and returns what it failed
// with, "" when it passed.
func failureOf(t *testing.T, check func(tb testing.TB)) string {
	t.Helper()
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failure
}

func TestSameJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, got, want string
		pass            bool
	}{
		{"key order and spacing", `{"b":1, "a":[true,null]}` + "\n", `{"a":[true,null],"b":1}`, true},
		{"number spelling", `{"n":1e2}`, `{"n":100}`, true},
		{"a different value", `{"a":1}`, `{"a":2}`, false},
		{"a missing member", `{"a":1}`, `{"a":1,"b":2}`, false},
		{"two values", `{"a":1}{"a":1}`, `{"a":1}`, false},
		{"not JSON", `deny`, `{}`, false},
		{"empty", ``, `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			failure := failureOf(t, func(tb testing.TB) { SameJSON(tb, []byte(tt.got), []byte(tt.want)) })
			if (failure == "") != tt.pass {
				t.Errorf("SameJSON(%q, %q) failure %q, want pass=%v", tt.got, tt.want, failure, tt.pass)
			}
		})
	}
}

func TestEventsAreFresh(t *testing.T) {
	t.Parallel()
	a := ShellEvent("a", "ls")
	a["session"].(map[string]any)["id"] = "changed"
	a["tool"].(map[string]any)["input"].(map[string]any)["command"] = "rm"
	b := ShellEvent("b", "ls")
	if b["session"].(map[string]any)["id"] != SessionID || b["tool"].(map[string]any)["input"].(map[string]any)["command"] != "ls" {
		t.Fatalf("a change to one event reached the next: %v", b)
	}
	if b["id"] != "b" || b["tool"].(map[string]any)["kind"] != "shell" {
		t.Fatalf("ShellEvent = %v", b)
	}
}
