package bundles_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// stormFile is file f at generation gen: it denies tool S with "f:gen".
func stormFile(f string, gen int) string {
	return fmt.Sprintf("package ahp.tool.before.%s\n\ndeny contains \"%s:%d\" if input.tool.name == \"S\"\n", f, f, gen)
}

// TestReloadStorm rewrites the policy files without pause, in place (so
// that half-written files are read), with a broken version now and then,
// while requests flow. Every answer must come from a whole policy: no
// error, exactly one deny per file, generations never going back, and
// allow for other tools.
func TestReloadStorm(t *testing.T) {
	dir := t.TempDir()
	files := []string{"a", "b", "c"}
	for _, f := range files {
		put(t, filepath.Join(dir, f+".rego"), stormFile(f, 0))
	}
	s := newStand(t, bundles.Options{Paths: []string{dir}, Watch: true, RescanInterval: 5 * testDebounce})

	// The quick run storms briefly; the long run (CI) storms longer.
	duration := 500 * time.Millisecond
	if testkit.LongEnabled() && !testing.Short() {
		duration = 2 * time.Second
	}
	end := time.Now().Add(duration)
	ctx, cancel := context.WithCancel(context.Background())
	var writes atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel: no worker outlives the test
	defer cancel()
	wg.Go(func() {
		for gen := 1; ctx.Err() == nil; gen++ {
			for _, f := range files {
				content := stormFile(f, gen)
				if gen%7 == 0 && f == "b" {
					content = "package ahp.tool.before.b\n\ndeny contains if {\n" // broken
				}
				// os.WriteFile truncates then writes: a reader can see
				// an empty or partial file.
				if err := os.WriteFile(filepath.Join(dir, f+".rego"), []byte(content), 0o644); err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
			runtime.Gosched()
		}
	})

	var answers, wrong atomic.Int64
	var firstWrong atomic.Value
	report := func(format string, a ...any) {
		wrong.Add(1)
		firstWrong.CompareAndSwap(nil, fmt.Sprintf(format, a...))
	}
	for range 4 {
		wg.Go(func() {
			last := map[string]int{}
			for i := 0; ctx.Err() == nil; i++ {
				tool := "S"
				if i%3 == 0 {
					tool = "other"
				}
				d, err := decide(t, s.eng, testkit.ToolEvent(testkit.NativeTool(tool, nil)))
				answers.Add(1)
				switch {
				case err != nil:
					report("Decide: %v", err)
				case d.Revision == "":
					report("decision without a revision")
				case tool == "other" && d.Denied():
					report("other tool denied: %+v", d.Matches)
				case tool == "S" && len(d.Matches) != len(files):
					report("S: %d matches, want %d: %+v", len(d.Matches), len(files), d.Matches)
				case tool == "S":
					for _, m := range d.Matches {
						f, genText, ok := strings.Cut(m.Reason, ":")
						gen, err := strconv.Atoi(genText)
						if !ok || err != nil || m.Package != "ahp.tool.before."+f {
							report("unexpected match %+v", m)
							continue
						}
						if gen < last[f] {
							report("%s went back from generation %d to %d", f, last[f], gen)
						}
						last[f] = gen
					}
				}
			}
		})
	}
	// The storm lasts its duration and, on a busy machine, until reloads
	// have activated twice after startup: the test is about answers
	// during reloads, so reloads must happen (waitEvent fails after settle).
	s.waitEvent(bundles.Activated, 2)
	<-time.After(time.Until(end))
	cancel()
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d wrong or failed answers of %d; first: %v", n, answers.Load(), firstWrong.Load())
	}
	// The storm ended: the last generation written is what decides.
	st := s.rl.Status()
	t.Logf("%d answers, %d file writes, reloads %v", answers.Load(), writes.Load(), st.Reloads)
	if st.Reloads[bundles.Activated] < 3 {
		t.Errorf("only %d activations during the storm: reloads starved", st.Reloads[bundles.Activated])
	}
	gen := lastGeneration(t, dir)
	want := make([]string, 0, len(files))
	for _, f := range files {
		want = append(want, fmt.Sprintf("%s:%d", f, gen[f]))
	}
	s.waitReasons("S", want...)
}

// lastGeneration reads the generation each storm file ended at; a broken
// last write of b is repaired first.
func lastGeneration(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range []string{"a", "b", "c"} {
		path := filepath.Join(dir, f+".rego")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, after, _ := strings.Cut(string(b), f+":")
		gen, err := strconv.Atoi(strings.SplitN(after, "\"", 2)[0])
		if err != nil {
			gen = 1 << 20
			put(t, path, stormFile(f, gen))
		}
		out[f] = gen
	}
	return out
}
