package bundles_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// rawTarball builds a gzipped tarball from entries in order; an entry with
// a negative size is a directory.
type tarEntry struct {
	name string
	body []byte
	typ  byte
	size int64 // declared size when body is nil (a bomb: zeros)
}

func rawTarball(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		if e.typ != 0 {
			h.Typeflag = e.typ
		}
		if e.body == nil && e.size > 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		body := e.body
		if body == nil && e.size > 0 {
			body = make([]byte, e.size)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

var okRule = []byte(rule("a", "A", "a1"))

// TestLoadLimits: every source over a limit is refused with an error that
// names the file and the config key, before it is read, and the sources
// are left as they were.
func TestLoadLimits(t *testing.T) {
	lim := bundles.Limits{MaxBytes: 64 << 10, MaxFiles: 5, MaxFileBytes: 32 << 10, MaxRegoBytes: 8 << 10}
	bigRego := []byte("package ahp.tool.before.a\n\ndeny contains \"x\" if false\n# " + strings.Repeat("y", 9<<10) + "\n")
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the policy path
		want  string                                // the error, with DIR for the directory
		is    error
	}{
		{
			name: "tarball expanding past max_bytes",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "bomb.tar.gz")
				os.WriteFile(p, rawTarball(t, tarEntry{name: "a.rego", body: okRule},
					tarEntry{name: "d1.json", size: 30 << 10}, tarEntry{name: "d2.json", size: 30 << 10},
					tarEntry{name: "d3.json", size: 30 << 10}), 0o644)
				return p
			},
			want: "policy over the size limits: DIR/bomb.tar.gz:d3.json: files add up to more than 65536 bytes (policy_limits.max_bytes)",
			is:   bundles.ErrOverLimit,
		},
		{
			name: "tarball with too many entries",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "many.tar.gz")
				var es []tarEntry
				for i := range 6 {
					es = append(es, tarEntry{name: fmt.Sprintf("d%d/", i), typ: tar.TypeDir})
				}
				os.WriteFile(p, rawTarball(t, es...), 0o644)
				return p
			},
			want: "policy over the size limits: DIR/many.tar.gz:d5/: more than 5 files (policy_limits.max_files)",
			is:   bundles.ErrOverLimit,
		},
		{
			name: "tarball with one huge file",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "one.tar.gz")
				os.WriteFile(p, rawTarball(t, tarEntry{name: "data.json", size: 40 << 10}), 0o644)
				return p
			},
			want: "policy over the size limits: DIR/one.tar.gz:data.json: file of 40960 bytes, over 32768 bytes (policy_limits.max_file_bytes)",
			is:   bundles.ErrOverLimit,
		},
		{
			name: "tarball with a huge Rego file",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "rego.tar.gz")
				os.WriteFile(p, rawTarball(t, tarEntry{name: "x/a.rego", body: bigRego}), 0o644)
				return p
			},
			want: fmt.Sprintf("policy over the size limits: DIR/rego.tar.gz:x/a.rego: Rego file of %d bytes, over 8192 bytes (policy_limits.max_rego_bytes)", len(bigRego)),
			is:   bundles.ErrOverLimit,
		},
		{
			name: "compressed tarball itself over max_file_bytes",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "fat.tar.gz")
				os.WriteFile(p, bytes.Repeat([]byte{1}, 33<<10), 0o644)
				return p
			},
			want: "policy path: DIR/fat.tar.gz: is 33792 bytes, over the 32768 bytes limit",
			is:   pathread.ErrTooLarge,
		},
		{
			name: "bundle directory with a huge Rego file",
			setup: func(t *testing.T, dir string) string {
				b := filepath.Join(dir, "b")
				put(t, filepath.Join(b, ".manifest"), `{"revision":"r1"}`)
				put(t, filepath.Join(b, "a.rego"), string(bigRego))
				return b
			},
			want: fmt.Sprintf("policy over the size limits: DIR/b/a.rego: Rego file of %d bytes, over 8192 bytes (policy_limits.max_rego_bytes)", len(bigRego)),
			is:   bundles.ErrOverLimit,
		},
		{
			name: "plain directory with a huge Rego file",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "p")
				put(t, filepath.Join(p, "a.rego"), string(okRule))
				put(t, filepath.Join(p, "b.rego"), string(bigRego))
				return p
			},
			want: fmt.Sprintf("policy over the size limits: DIR/p/b.rego: Rego file of %d bytes, over 8192 bytes (policy_limits.max_rego_bytes)", len(bigRego)),
			is:   bundles.ErrOverLimit,
		},
		{
			name: "plain directory with a huge data document",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "p")
				put(t, filepath.Join(p, "a.rego"), string(okRule))
				put(t, filepath.Join(p, "data.json"), `{"x":"`+strings.Repeat("z", 40<<10)+`"}`)
				return p
			},
			want: "policy over the size limits: DIR/p/data.json: file of 40968 bytes, over 32768 bytes (policy_limits.max_file_bytes)",
			is:   bundles.ErrOverLimit,
		},
		{
			name: "FIFO as a policy file",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "pipe.rego")
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: "policy path: DIR/pipe.rego: is a named pipe (FIFO), not a regular file",
			is:   pathread.ErrNotRegular,
		},
		{
			name: "FIFO named data.json inside a policy directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "p")
				put(t, filepath.Join(p, "a.rego"), string(okRule))
				if err := syscall.Mkfifo(filepath.Join(p, "data.json"), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: "policy path: DIR/p/data.json: is a named pipe (FIFO), not a regular file",
			is:   pathread.ErrNotRegular,
		},
		{
			name: "FIFO as a bundle tarball",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "pipe.tar.gz")
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			},
			want: "policy path: DIR/pipe.tar.gz: is a named pipe (FIFO), not a regular file",
			is:   pathread.ErrNotRegular,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before := testkit.SnapshotTree(t, dir)
			_, err := bundles.LoadWith([]string{path}, bundles.LoadOptions{Limits: lim})
			want := strings.ReplaceAll(c.want, "DIR", dir)
			if err == nil || err.Error() != want || !errors.Is(err, c.is) {
				t.Errorf("err = %v\nwant  %s (is %v)", err, want, c.is)
			}
			testkit.AssertSameTree(t, before, testkit.SnapshotTree(t, dir))
		})
	}
}

// TestLoadWithinLimits: the limits leave a real bundle alone.
func TestLoadWithinLimits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ok.tar.gz")
	bundleSpec{revision: "r1", files: map[string]string{"a.rego": string(okRule)}, data: map[string]any{"x": 1}}.writeTarball(t, p)
	pol, err := bundles.LoadWith([]string{p}, bundles.LoadOptions{Limits: bundles.Limits{MaxFiles: 3, MaxRegoBytes: int64(len(okRule))}})
	if err != nil || pol.Revision != "r1" {
		t.Fatalf("LoadWith = %v, %v; want revision r1", pol, err)
	}
}

// TestReloadOverLimitKeepsLastGood: a reload whose sources grew past a
// limit fails, and the last good policy keeps deciding.
func TestReloadOverLimitKeepsLastGood(t *testing.T) {
	dir := t.TempDir()
	s := newStand(t, bundles.Options{Paths: oneFile(t, dir), Watch: true, RescanInterval: -1,
		Limits: bundles.Limits{MaxRegoBytes: 4 << 10}})
	good := s.rl.Status().Revision
	put(t, filepath.Join(dir, "a.rego"), rule("a", "A", "a2")+"# "+strings.Repeat("y", 5<<10)+"\n")
	ev := s.waitEvent(bundles.Failed, 0)
	if !errors.Is(ev.Err, bundles.ErrOverLimit) || !strings.Contains(ev.Err.Error(), "policy_limits.max_rego_bytes") {
		t.Errorf("reload error %v, want ErrOverLimit naming policy_limits.max_rego_bytes", ev.Err)
	}
	if got := s.reasons("A"); !equalStrings(got, []string{"a1"}) {
		t.Errorf("after an oversize write: %q, want the last good answer a1", got)
	}
	if st := s.rl.Status(); st.Revision != good {
		t.Errorf("revision %s, want %s kept", st.Revision, good)
	}
}

// TestRemoteBundleOverLimit: a downloaded bundle is held to the limits
// too: a file over max_file_bytes fails the download (OPA's reader stops
// at the cap), a Rego file over max_rego_bytes fails before compiling,
// and the last good bundle keeps deciding.
func TestRemoteBundleOverLimit(t *testing.T) {
	bs := newBundleServer(t)
	bs.publish(t, bundleSpec{revision: "r1", files: map[string]string{"r.rego": rule("r", "R", "r1")}})
	s := newStand(t, bundles.Options{OPA: remoteConfig(t, bs, ""),
		Limits: bundles.Limits{MaxFileBytes: 8 << 10, MaxRegoBytes: 4 << 10}})
	s.waitReasons("R", "r1")

	bs.publish(t, bundleSpec{revision: "r2", files: map[string]string{"r.rego": rule("r", "R", "r2")},
		data: map[string]any{"blob": strings.Repeat("z", 9<<10)}})
	ev := s.waitMatch("a download over max_file_bytes", func(ev bundles.Event) bool {
		return ev.Err != nil && strings.Contains(ev.Err.Error(), "exceeds configured size_limit_bytes (8192 bytes)")
	})
	if !errors.Is(ev.Err, bundles.ErrDownload) {
		t.Errorf("error %v, want a download error", ev.Err)
	}

	bs.publish(t, bundleSpec{revision: "r3", files: map[string]string{"r.rego": rule("r", "R", "r3") + "# " + strings.Repeat("y", 5<<10) + "\n"}})
	ev = s.waitMatch("refusal of r3", func(ev bundles.Event) bool { return ev.Revision == "r3" })
	if want := "policy over the size limits: authz:/r.rego: Rego file of"; ev.Outcome != bundles.Failed || !strings.Contains(ev.Err.Error(), want) ||
		!strings.Contains(ev.Err.Error(), "(policy_limits.max_rego_bytes)") {
		t.Errorf("r3: %s %v, want a failure starting %q", ev.Outcome, ev.Err, want)
	}
	if got := s.reasons("R"); !equalStrings(got, []string{"r1"}) {
		t.Errorf("after refused releases: %q, want r1", got)
	}
}
