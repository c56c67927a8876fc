// Command ahp-loadgen compares ahp-opa with OPA deciding the same event:
// requests per second and p50/p99 latency at several connection counts,
// side by side. Each side is an HTTP endpoint, a stdio process (ahp-opa
// only) or a command started for every event (ahp-opa's per_event
// lifecycle, `opa eval`). bench/http-vs-opa.sh and bench/hotpath-vs-opa.sh
// start the servers and run it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/bench"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/transport"
)

// defaultEvent is a tool call every built-in rule must look at and let
// through: the usual case, and the most expensive one.
const defaultEvent = `{"id":"bench","source":"urn:ahp-opa:bench","type":"tool.before",
"time":"2026-01-02T03:04:05Z","session":{"id":"s1","cwd":"/repo"},"call":{"id":"c1"},"path":"native",
"tool":{"name":"Bash","kind":"shell","origin":"native",
"input":{"command":"cd /repo && go test ./... 2>&1 | tail -20 && git status --short"}}}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ahp-loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		ahpURL = flag.String("ahp", "", "ahp-opa endpoint: an http:// URL (e.g. http://127.0.0.1:18181/ahp), "+
			"'stdio:PROGRAM ARGS' (one persistent process per connection) or 'per-event:PROGRAM ARGS' (a process per event)")
		opaURL = flag.String("opa", "", "OPA endpoint: a data API URL (e.g. http://127.0.0.1:18182/v1/data/ahp/tool/before/builtin/deny) "+
			"or 'per-event:PROGRAM ARGS' (opa eval -I, the input on stdin)")
		hookURL  = flag.String("hook", "", "ahp-opa native hook endpoint, e.g. http://127.0.0.1:18181/hooks/claude-code: the event as a Claude Code PreToolUse payload")
		token    = flag.String("token", "", "bearer token for ahp-opa")
		connList = flag.String("conns", "1,8", "comma-separated connection counts")
		duration = flag.Duration("duration", 5*time.Second, "measured time per run")
		warmup   = flag.Duration("warmup", time.Second, "unmeasured time before each run")
		rounds   = flag.Int("rounds", 3, "runs per target and connection count; medians are reported")
		events   = flag.String("event", "", "JSON file holding the tool.before event; default: a shell command every rule lets through")
		payload  = flag.String("payload", "", "instead of -event, shell (a command that differs on every request) or a large tool input KIND:BYTES, KIND write or heredoc (e.g. write:1000000), whose content differs on every request")
		deny     = flag.Bool("deny", false, "the event must be denied (default: it must not be)")
		ahpPID   = flag.Int("ahp-pid", 0, "process id of ahp-opa, to measure its CPU time (Linux)")
		opaPID   = flag.Int("opa-pid", 0, "process id of the OPA server, to measure its CPU time (Linux)")
		opaInput = flag.String("opa-input", "enriched",
			"what OPA gets: enriched (the input ahp-opa's policies see, input.ahp included, computed once here) or raw (the event)")
	)
	flag.Parse()
	if *ahpURL == "" && *opaURL == "" && *hookURL == "" {
		return fmt.Errorf("give -ahp, -opa, -hook or several")
	}
	if *rounds < 1 || *duration <= 0 || *duration > 10*time.Minute {
		return fmt.Errorf("-rounds must be positive and -duration between 0 and 10m")
	}
	var conns []int
	for _, s := range strings.Split(*connList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 256 {
			return fmt.Errorf("-conns %q: want counts between 1 and 256", *connList)
		}
		conns = append(conns, n)
	}
	raw := []byte(defaultEvent)
	if *events != "" {
		var err error
		if raw, err = os.ReadFile(*events); err != nil {
			return err
		}
	}
	var event map[string]any
	if err := json.Unmarshal(raw, &event); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	if *payload == "shell" {
		event = bench.ShellEvent()
	} else if *payload != "" {
		kind, size, _ := strings.Cut(*payload, ":")
		n, err := strconv.Atoi(size)
		if err != nil {
			return fmt.Errorf("-payload %q: want KIND:BYTES", *payload)
		}
		if event, err = bench.LargeEvent(kind, n); err != nil {
			return err
		}
	}
	var targets []bench.Target
	if *ahpURL != "" {
		t, err := target(bench.AHP, *ahpURL)
		if err != nil {
			return err
		}
		t.Token, t.PID = *token, *ahpPID
		targets = append(targets, t)
	}
	if *hookURL != "" {
		// First, so that with -ahp the ratio line reads hook/ahp-opa.
		targets = append([]bench.Target{{Protocol: bench.ClaudeHook, URL: *hookURL, Token: *token, PID: *ahpPID}}, targets...)
	}
	if *opaURL != "" {
		t, err := target(bench.OPA, *opaURL)
		if err != nil {
			return err
		}
		t.PID = *opaPID
		targets = append(targets, t)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := bench.Options{Duration: *duration, Warmup: *warmup, Event: event, Deny: *deny}
	switch *opaInput {
	case "raw":
	case "enriched":
		// The built-in policy reads input.ahp, which ahp-opa derives from
		// the event (the parsed shell command, resolved paths). OPA gets it
		// precomputed: it is spared that work, which favours OPA.
		opts.OPAInput = func(ev map[string]any) (any, error) {
			event, err := transport.EventOfMap(ev)
			if err != nil {
				return nil, err
			}
			return ast.JSON(enrich.FullInput(&event, enrich.Options{}))
		}
	default:
		return fmt.Errorf("-opa-input %q: want enriched or raw", *opaInput)
	}
	results := map[[2]int][]bench.Result{} // [conns, target index]
	// Rounds interleave the targets so that a noisy moment hurts both.
	for r := range *rounds {
		for _, c := range conns {
			for i, t := range targets {
				opts.Conns = c
				res, err := bench.Run(ctx, t, opts)
				if err != nil {
					return fmt.Errorf("%s, %d conns: %w", t.Protocol, c, err)
				}
				fmt.Fprintf(os.Stderr, "round %d: %-8s %-9s %d conns: %8.0f req/s  p50 %-9v p99 %-9v cpu/req %-8v errors %d\n",
					r+1, t.Protocol, t.Transport, c, res.RPS(), res.P50.Round(time.Microsecond), res.P99.Round(time.Microsecond),
					res.CPUPerRequest().Round(time.Microsecond), res.Errors)
				results[[2]int{c, i}] = append(results[[2]int{c, i}], res)
			}
		}
	}

	fmt.Printf("\nmedian of %d rounds of %v per target and connection count\n\n", *rounds, *duration)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conns\ttarget\ttransport\treq/s\tp50\tp99\tCPU/req\terrors\t")
	errs := 0
	for _, c := range conns {
		for i, t := range targets {
			m := bench.Median(results[[2]int{c, i}])
			errs += m.Errors
			cpu := "-"
			if m.CPU > 0 {
				cpu = m.CPUPerRequest().Round(time.Microsecond).String()
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%v\t%v\t%s\t%d\t\n", c, t.Protocol, t.Transport, m.RPS(),
				m.P50.Round(time.Microsecond), m.P99.Round(time.Microsecond), cpu, m.Errors)
		}
	}
	tw.Flush()
	if len(targets) == 2 {
		fmt.Println()
		for _, c := range conns {
			a, o := bench.Median(results[[2]int{c, 0}]), bench.Median(results[[2]int{c, 1}])
			fmt.Printf("%d conns: %s/%s throughput %.2fx, p50 %.2fx (%v vs %v), p99 %v vs %v", c, targets[0].Protocol, targets[1].Protocol, a.RPS()/o.RPS(),
				float64(a.P50)/float64(o.P50), a.P50.Round(time.Microsecond), o.P50.Round(time.Microsecond),
				a.P99.Round(time.Microsecond), o.P99.Round(time.Microsecond))
			if a.CPU > 0 && o.CPU > 0 {
				fmt.Printf(", CPU per request %v vs %v, cpu %.2fx", a.CPUPerRequest().Round(time.Microsecond),
					o.CPUPerRequest().Round(time.Microsecond), float64(a.CPUPerRequest())/float64(o.CPUPerRequest()))
			}
			fmt.Println()
		}
	}
	if errs > 0 {
		for _, rs := range results {
			for _, r := range rs {
				if r.FirstErr != nil {
					return fmt.Errorf("%d wrong or failed answers; first from %s: %v", errs, r.Target.Protocol, r.FirstErr)
				}
			}
		}
	}
	return nil
}

// target reads an -ahp or -opa value: a URL, or a transport and a command
// line split at spaces (paths with spaces are not supported).
func target(p bench.Protocol, spec string) (bench.Target, error) {
	t := bench.Target{Protocol: p}
	for _, tr := range []bench.Transport{bench.Stdio, bench.PerEvent} {
		if line, ok := strings.CutPrefix(spec, tr.String()+":"); ok {
			t.Transport, t.Command = tr, strings.Fields(line)
			if len(t.Command) == 0 {
				return t, fmt.Errorf("%q: no command", spec)
			}
			return t, nil
		}
	}
	t.URL = spec
	return t, nil
}
