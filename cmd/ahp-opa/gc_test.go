package main

import (
	"runtime/debug"
	"testing"
)

// TestServeGC: a server collects at servingGCPercent unless the user tuned
// the collector; during the start pause the target waits for its end.
func TestServeGC(t *testing.T) {
	for _, tt := range []struct {
		name        string
		gogc        string
		paused      bool
		wantPercent int // the collector's target after serveGC
		wantLater   int // the target the start pause restores
	}{
		{"default", "", false, servingGCPercent, 0},
		{"GOGC set", "150", false, 100, 0},
		{"during the start pause", "", true, -1, servingGCPercent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", "")
			start := 100
			if tt.paused {
				start = -1
			}
			prev := debug.SetGCPercent(start)
			gc.paused, gc.percent = tt.paused, 0
			t.Cleanup(func() {
				debug.SetGCPercent(prev)
				gc.paused, gc.percent = false, 0
			})
			serveGC()
			if got := debug.SetGCPercent(start); got != tt.wantPercent {
				t.Errorf("GC percent %d, want %d", got, tt.wantPercent)
			}
			if gc.percent != tt.wantLater {
				t.Errorf("restored after the pause: %d, want %d", gc.percent, tt.wantLater)
			}
		})
	}
}
