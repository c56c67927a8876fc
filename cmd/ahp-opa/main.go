// Command ahp-opa is an Agent Hooks Protocol backend that decides tool calls
// with Rego policies.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// exitError ends the process with a status and no further message: what
// had to be said was already written.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// startHeap caps the heap while collection is paused at start.
const startHeap = 128 << 20

// gcAfter is how long collection stays paused at start: longer than a
// per_event start (one event, then exit).
const gcAfter = time.Second

// pauseGC pauses the garbage collector for the start, up to startHeap,
// and resumes it gcAfter later. What a start allocates (parse trees,
// compiler passes) is mostly garbage at once; collecting it while it is
// made, and again just after, cost a per_event start a third of its CPU,
// and a process that exits within gcAfter never collects it at all. A
// GOGC or GOMEMLIMIT the user set is left alone.
func pauseGC() {
	if gcTunedByUser() {
		return
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.limit = debug.SetMemoryLimit(startHeap)
	gc.percent = debug.SetGCPercent(-1)
	gc.paused = true
	time.AfterFunc(gcAfter, func() {
		gc.mu.Lock()
		defer gc.mu.Unlock()
		debug.SetGCPercent(gc.percent)
		debug.SetMemoryLimit(gc.limit)
		gc.paused = false
	})
}

// servingGCPercent is the collector's target while serving decisions. A
// decision leaves almost only garbage (the live heap is the compiled
// policy), so collecting at 5× the live heap instead of 2× costs a few
// tens of megabytes and saves about a fifth of the CPU per decision
// (BENCHMARKS.md, "GC target"). Long jobs that keep much alive (replay,
// test) keep Go's default.
const servingGCPercent = 400

var gc struct {
	mu      sync.Mutex
	paused  bool
	percent int
	limit   int64
}

// serveGC sets the collector's target for a long-running server, unless
// the user set GOGC or GOMEMLIMIT.
func serveGC() {
	if gcTunedByUser() {
		return
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.paused {
		gc.percent = servingGCPercent // applied when the start pause ends
		return
	}
	debug.SetGCPercent(servingGCPercent)
}

func gcTunedByUser() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

func main() {
	pauseGC()
	root := &cobra.Command{
		Use:           "ahp-opa",
		Short:         "Agent Hooks Protocol backend that decides tool calls with Rego",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), evalCommand(), replayCommand(), registrationCommand(), testCommand(), versionCommand(), hookCommand(), installCommand(), daemonCommand())
	if err := root.Execute(); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "ahp-opa:", err)
		os.Exit(1)
	}
}
