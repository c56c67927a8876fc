package bundles_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/bundles"
)

// FuzzReadBundle feeds arbitrary bytes to the bundle reader as a tarball,
// and, when they unpack, as a bundle directory: it must return a policy or
// an error, never panic or read past its limits.
func FuzzReadBundle(f *testing.F) {
	f.Add(rawTarball(f, tarEntry{name: ".manifest", body: []byte(`{"revision":"r"}`)},
		tarEntry{name: "a.rego", body: okRule}, tarEntry{name: "data.json", body: []byte(`{"a":1}`)}))
	f.Add(rawTarball(f, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/a.rego", body: okRule}))
	f.Add(rawTarball(f, tarEntry{name: "data.json", size: 70 << 10}))
	f.Add([]byte("\x1f\x8b not really gzip"))
	lim := bundles.Limits{MaxBytes: 64 << 10, MaxFiles: 16, MaxFileBytes: 32 << 10, MaxRegoBytes: 16 << 10}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		tarball := filepath.Join(dir, "b.tar.gz")
		if err := os.WriteFile(tarball, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := bundles.LoadWith([]string{tarball}, bundles.LoadOptions{Limits: lim})
		if err == nil && len(p.Modules) == 0 {
			t.Fatal("a policy without modules")
		}
		bdir := filepath.Join(dir, "b")
		if !unpackBounded(raw, bdir, lim) {
			return
		}
		p, err = bundles.LoadWith([]string{bdir}, bundles.LoadOptions{Limits: lim})
		if err == nil && len(p.Modules) == 0 {
			t.Fatal("a policy without modules")
		}
	})
}

// unpackBounded writes the regular files of a tarball under dir, with a
// .manifest so that the directory reads as a bundle; false when the bytes
// are not a small tarball with safe names.
func unpackBounded(raw []byte, dir string, lim bundles.Limits) bool {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	tr := tar.NewReader(io.LimitReader(zr, 2*lim.MaxBytes))
	wrote := false
	for range 2 * lim.MaxFiles {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false
		}
		name := filepath.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(name) || strings.HasPrefix(filepath.Base(name), ".") && name != ".manifest" {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 2*lim.MaxFileBytes))
		if err != nil {
			return false
		}
		p := filepath.Join(dir, name)
		if os.MkdirAll(filepath.Dir(p), 0o755) != nil || os.WriteFile(p, b, 0o644) != nil {
			return false
		}
		wrote = true
	}
	if !wrote {
		return false
	}
	if _, err := os.Stat(filepath.Join(dir, ".manifest")); err != nil {
		if os.WriteFile(filepath.Join(dir, ".manifest"), []byte(`{}`), 0o644) != nil {
			return false
		}
	}
	return true
}
