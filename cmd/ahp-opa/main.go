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

	"github.com/ahp-opa/ahp-opa/engine"
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
// and resumes it gcAfter later or at resumeGC, whichever comes first. What
// a start allocates (parse trees, compiler passes) is mostly garbage at
// once; collecting it while it is made, and again just after, cost a
// per_event start a third of its CPU, and a process that exits within
// gcAfter never collects it at all. A GOGC or GOMEMLIMIT the user set is
// left alone.
func pauseGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := debug.SetMemoryLimit(startHeap)
	percent := debug.SetGCPercent(-1)
	var once sync.Once
	resume := func() {
		once.Do(func() {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
		})
	}
	resumeGC = resume
	time.AfterFunc(gcAfter, resume)
}

// resumeGC ends the start's pause early. A server calls it once its
// policy is ready: past that point its heap holds requests, and a large
// one decided while collection was paused left its garbage in the
// process's peak memory (a 4 MB Write grew the peak by 6.9× its size,
// against 3.5–4× with collection on).
var resumeGC = func() {}

func main() {
	// Before any command can evaluate Rego: OPA's builtin table has no lock.
	engine.InstallRegexPrefilter()
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
