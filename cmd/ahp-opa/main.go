// Command ahp-opa is an Agent Hooks Protocol backend that decides tool calls
// with Rego policies.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// readySlack is how far the heap may grow past what the start left once
// the policy is ready, while collection is still paused.
const readySlack = 12 << 20

// pauseGC pauses the garbage collector for the start, up to startHeap,
// and resumes it gcAfter later. What a start allocates (parse trees,
// compiler passes) is mostly garbage at once; collecting it while it is
// made, and again just after, cost a per_event start a third of its CPU,
// and a process that exits within gcAfter never collects it at all. A
// GOGC or GOMEMLIMIT the user set is left alone.
func pauseGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := debug.SetMemoryLimit(startHeap)
	percent := debug.SetGCPercent(-1)
	var mu sync.Mutex
	paused := true
	time.AfterFunc(gcAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		paused = false
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	policyReady = sync.OnceFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		if paused {
			debug.SetMemoryLimit(min(startHeap, goMemory()+readySlack))
		}
	})
}

// policyReady narrows the start's pause once a server's policy is ready
// (the first call counts): the start's garbage may stay until gcAfter, but
// requests may add only readySlack to it before the collector runs. A
// per_event process stays well below that (one decision, then exit) and
// never collects; a large request decided in a server's first second no
// longer keeps its garbage in the process's peak memory (a 4 MB Write grew
// the peak by 6.9× its size; collecting right at ready instead cost a
// per_event process one collection of its whole start, about 3.6 ms of
// CPU).
var policyReady = func() {}

// goMemory is the memory the Go runtime holds from the system, as
// GOMEMLIMIT counts it.
func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return startHeap
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

func main() {
	// Before any command can evaluate Rego: OPA's builtin table has no lock.
	engine.InstallRegexPrefilter()
	pauseGC()
	if err := rootCommand().Execute(); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "ahp-opa:", err)
		os.Exit(1)
	}
}

// rootCommand is the whole command tree.
func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "ahp-opa",
		Short:         "Agent Hooks Protocol backend that decides tool calls with Rego",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionText(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(serveCommand(), evalCommand(), replayCommand(), registrationCommand(), testCommand(), versionCommand(), hookCommand(), installCommand(), daemonCommand())
	plainBoolFlags(root)
	return root
}

// plainBool hides IsBoolFlag from pflag's usage, which since v1.1 prints
// every boolean flag as --x[=true|false]; --x alone still means true.
type plainBool struct{ pflag.Value }

// plainBoolFlags makes every boolean flag of cmd and its subcommands,
// --help included, read as --x in help.
func plainBoolFlags(cmd *cobra.Command) {
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				if _, done := f.Value.(plainBool); !done {
					f.Value = plainBool{f.Value}
				}
			}
		})
	}
	for _, c := range cmd.Commands() {
		plainBoolFlags(c)
	}
}
