package bundles

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// Limits bound what one policy load reads, so that a crafted or mistaken
// source (a small tarball that expands to gigabytes, a huge generated .rego
// file) is refused before it is read rather than exhausting memory. A
// reload over the limits fails and the last good policy keeps deciding.
// Zero fields take the defaults below.
type Limits struct {
	// MaxBytes caps all files of one load together, as expanded.
	MaxBytes int64 `koanf:"max_bytes"`
	// MaxFiles caps the number of files (tar entries) of one load.
	MaxFiles int `koanf:"max_files"`
	// MaxFileBytes caps one file (a data document, a tarball on disk).
	MaxFileBytes int64 `koanf:"max_file_bytes"`
	// MaxRegoBytes caps one .rego file: parsing takes some 35 times the
	// source size in memory.
	MaxRegoBytes int64 `koanf:"max_rego_bytes"`
}

// Default limits: far above real policy bundles, far below what hurts.
const (
	DefaultMaxBytes     = 256 << 20
	DefaultMaxFiles     = 10_000
	DefaultMaxFileBytes = 128 << 20
	DefaultMaxRegoBytes = 8 << 20
)

// WithDefaults fills zero fields with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxRegoBytes <= 0 {
		l.MaxRegoBytes = DefaultMaxRegoBytes
	}
	return l
}

// ErrOverLimit is returned for a policy source over its Limits.
var ErrOverLimit = errors.New("policy over the size limits")

// tally counts one load's files against the limits.
type tally struct {
	lim   Limits
	files int
	bytes int64
}

// add counts one file of size bytes; name is what the error shows.
func (t *tally) add(name string, size int64) error {
	t.files++
	t.bytes += size
	switch {
	case t.files > t.lim.MaxFiles:
		return fmt.Errorf("%w: %s: more than %d files (policy_limits.max_files)", ErrOverLimit, name, t.lim.MaxFiles)
	case strings.HasSuffix(name, ".rego") && size > t.lim.MaxRegoBytes:
		return fmt.Errorf("%w: %s: Rego file of %s, over %s (policy_limits.max_rego_bytes)",
			ErrOverLimit, name, pathread.Size(size), pathread.Size(t.lim.MaxRegoBytes))
	case size > t.lim.MaxFileBytes:
		return fmt.Errorf("%w: %s: file of %s, over %s (policy_limits.max_file_bytes)",
			ErrOverLimit, name, pathread.Size(size), pathread.Size(t.lim.MaxFileBytes))
	case t.bytes > t.lim.MaxBytes:
		return fmt.Errorf("%w: %s: files add up to more than %s (policy_limits.max_bytes)",
			ErrOverLimit, name, pathread.Size(t.lim.MaxBytes))
	}
	return nil
}

// checkTarball walks a gzipped tarball's headers and refuses it when its
// entries exceed the limits. Every size is checked before the entry's
// data is read, and data is discarded, so at most MaxBytes are expanded
// and nothing is kept.
func checkTarball(path string, raw []byte, lim Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("bundle %s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	t := tally{lim: lim}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundle %s: %w", path, err)
		}
		// Every entry counts, whatever its type: the reader skips a
		// directory's or a device's data by reading it too.
		if err := t.add(path+":"+h.Name, h.Size); err != nil {
			return err
		}
	}
}

// checkBundleDir refuses a bundle directory whose regular files exceed the
// limits, from their sizes, before any is read. Like OPA's reader it does
// not follow symlinks and reads regular files only.
func checkBundleDir(root string, lim Limits) error {
	t := tally{lim: lim}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("bundle %s: %w", root, err)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("bundle %s: %w", root, err)
		}
		return t.add(path, info.Size())
	})
}

// limitFilter wraps a loader filter: every file the loader would read must
// be a regular file within the limits. A loader filter can only skip, so
// the first refusal is kept in *refused and every later file is skipped.
func limitFilter(skip func(string, fs.FileInfo, int) bool, lim Limits, refused *error) func(string, fs.FileInfo, int) bool {
	t := tally{lim: lim}
	return func(path string, info fs.FileInfo, depth int) bool {
		if *refused != nil {
			return true
		}
		if skip(path, info, depth) {
			return true
		}
		if info.IsDir() {
			return false
		}
		if err := pathread.CheckRegular(path, info); err != nil {
			*refused = fmt.Errorf("policy path: %w", err)
			return true
		}
		if err := t.add(path, info.Size()); err != nil {
			*refused = err
			return true
		}
		return false
	}
}
