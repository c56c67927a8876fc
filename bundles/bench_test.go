package bundles_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

var ruleCounts = []int{30, 100, 300, 3000}

// BenchmarkCompileSwap measures what a reload costs once the files are
// parsed: compile the policy, prepare the query, swap the snapshot in.
func BenchmarkCompileSwap(b *testing.B) {
	for _, n := range ruleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			p := loadRules(b, n)
			eng := engine.New(engine.Options{})
			caps := engine.DefaultCapabilities()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s, err := engine.Compile(ctx, p, engine.CompileOptions{Capabilities: caps})
				if err != nil {
					b.Fatal(err)
				}
				eng.Activate(s)
			}
		})
	}
}

// BenchmarkLoadCompileSwap adds reading and parsing the files: a whole
// local reload, less the debounce.
func BenchmarkLoadCompileSwap(b *testing.B) {
	for _, n := range ruleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			put(b, filepath.Join(dir, "many.rego"), manyRules(n, 0))
			eng := engine.New(engine.Options{})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				p, err := bundles.Load([]string{dir})
				if err != nil {
					b.Fatal(err)
				}
				if err := eng.Load(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func loadRules(b *testing.B, n int) *bundles.Policy {
	b.Helper()
	dir := b.TempDir()
	put(b, filepath.Join(dir, "many.rego"), manyRules(n, 0))
	p, err := bundles.Load([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkWriteToEffect measures the time from a file write to the first
// decision made by the new policy, through fsnotify, the default debounce,
// loading, compiling and the swap. It reports the median and the 90th
// percentile; ns/op includes the pause between writes.
func BenchmarkWriteToEffect(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "many.rego")
			put(b, path, manyRules(n, 0))
			eng := engine.New(engine.Options{})
			rl, err := bundles.NewReloader(eng, bundles.Options{Paths: []string{dir}, Watch: true, RescanInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			if err := rl.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			defer rl.Stop()
			var lat []time.Duration
			gen := 0
			for b.Loop() {
				gen++
				want := fmt.Sprintf("generation %d", gen)
				start := time.Now()
				if err := os.WriteFile(path, []byte(manyRules(n, gen)), 0o644); err != nil {
					b.Fatal(err)
				}
				for {
					d, err := decide(b, eng, testkit.ToolEvent(testkit.NativeTool("M", nil)))
					if err != nil {
						b.Fatal(err)
					}
					if len(d.Matches) == 1 && d.Matches[0].Reason == want {
						break
					}
					if time.Since(start) > settle {
						b.Fatalf("generation %d not in effect after %s", gen, settle)
					}
					time.Sleep(200 * time.Microsecond)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "ms-median")
			b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "ms-p90")
		})
	}
}

// BenchmarkReloadMemory reloads a 300-rule policy and reports the live heap
// with one snapshot (after GC), the highest heap in use sampled during the
// reloads, and the bytes allocated per reload (B/op).
func BenchmarkReloadMemory(b *testing.B) {
	dir := b.TempDir()
	put(b, filepath.Join(dir, "many.rego"), manyRules(300, 0))
	p, err := bundles.Load([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(engine.Options{})
	ctx := context.Background()
	if err := eng.Load(ctx, p); err != nil {
		b.Fatal(err)
	}
	steady := liveHeap()

	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				metrics.Read(sample)
				if v := sample[0].Value.Uint64(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		if err := eng.Load(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(steady)/(1<<20), "MiB-live")
	b.ReportMetric(float64(peak.Load())/(1<<20), "MiB-peak")
	runtime.KeepAlive(p)
}
