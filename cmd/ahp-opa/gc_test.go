package main

import (
	"runtime/debug"
	"testing"
)

// TestPolicyReadyNarrowsPause: once a server's policy is ready, the
// start's collector pause lets the heap grow by readySlack at most, not up
// to startHeap (BenchmarkLargeInputRSS in test/ shows what it saves).
func TestPolicyReadyNarrowsPause(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
		policyReady = func() {}
	})

	pauseGC()
	if got := debug.SetMemoryLimit(-1); got != startHeap {
		t.Fatalf("paused: memory limit %d, want %d", got, startHeap)
	}
	used := goMemory()
	policyReady()
	got := debug.SetMemoryLimit(-1)
	if got >= startHeap && used+readySlack < startHeap {
		t.Fatalf("ready: memory limit still %d; want about %d (in use %d + slack %d)", got, used+readySlack, used, readySlack)
	}
	if got < used {
		t.Fatalf("ready: memory limit %d below the memory in use, %d", got, used)
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("ready: collection resumed (GOGC %d) before gcAfter", p)
	}
}
