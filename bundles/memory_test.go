package bundles_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// manyRules is a policy of n deny rules, the first one naming gen.
func manyRules(n, gen int) string {
	var b strings.Builder
	b.WriteString("package ahp.tool.before.many\n\n")
	fmt.Fprintf(&b, "deny contains \"generation %d\" if input.tool.name == \"M\"\n", gen)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "deny contains {\"reason\": \"rule %d\", \"code\": \"com.example.r%d\"} if { input.tool.name == \"T%d\"; startswith(input.tool.input.command, \"x%d\") }\n", i, i, i, i)
	}
	return b.String()
}

// liveHeap is the heap in use after full collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestReloadMemoryStable reloads thousands of times and checks that the
// live heap does not grow: each reload releases the previous snapshot,
// policy and parsed modules.
func TestReloadMemoryStable(t *testing.T) {
	testkit.RequireLong(t) // a soak: hundreds of reloads
	reloads := 2000
	if testing.Short() || raceEnabled {
		reloads = 500
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "many.rego")
	put(t, path, manyRules(20, 0))
	eng := engine.New(engine.Options{})
	done := make(chan bundles.Outcome, 1)
	rl, err := bundles.NewReloader(eng, bundles.Options{
		Paths: []string{dir}, RescanInterval: -1,
		OnReload: func(ev bundles.Event) { done <- ev.Outcome },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Stop)
	<-done // startup activation

	var warm uint64
	for i := 1; i <= reloads; i++ {
		put(t, path, manyRules(20, i))
		rl.Reload()
		select {
		case o := <-done:
			if o != bundles.Activated {
				t.Fatalf("reload %d: %s", i, o)
			}
		case <-time.After(settle):
			t.Fatalf("reload %d did not finish", i)
		}
		if i == reloads/10 {
			warm = liveHeap()
		}
	}
	end := liveHeap()
	d, err := decide(t, eng, testkit.ToolEvent(testkit.NativeTool("M", nil)))
	if err != nil || len(d.Matches) != 1 || d.Matches[0].Reason != fmt.Sprintf("generation %d", reloads) {
		t.Fatalf("last decision %+v, %v", d, err)
	}
	growth := int64(end) - int64(warm)
	t.Logf("live heap after %d reloads: %d KiB; after %d: %d KiB (growth %+d KiB)",
		reloads/10, warm>>10, reloads, end>>10, growth>>10)
	// One snapshot of this policy is about 100 KiB: growth of 1 MiB over
	// 450 to 1800 reloads would be a snapshot leaked every few dozen.
	if growth > 1<<20 {
		t.Errorf("live heap grew by %d KiB over %d reloads", growth>>10, reloads-reloads/10)
	}
}
