package bundles

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// fingerprint maps every file a load would read to a hash of its content.
// Comparing two fingerprints tells whether the sources changed without
// parsing them, which lets a periodic rescan run cheaply; it catches what
// file-system events miss (network file systems, Kubernetes' symlink
// swaps). A file that cannot be read maps to its error.
type fingerprint map[string]string

// maxWalkDepth stops a walk that follows a symlink loop.
const maxWalkDepth = 64

// fingerprintPaths walks paths as LoadWith would.
func fingerprintPaths(paths []string, tests bool, maxFile int64) fingerprint {
	fp := fingerprint{}
	for _, path := range paths {
		kind, err := pathKind(path)
		switch {
		case err != nil:
			fp[path] = "error: " + err.Error()
		case kind == kindTarball:
			fp.addFile(path, maxFile)
		case kind == kindBundleDir:
			// Everything counts, .manifest and .signatures.json included.
			fp.walk(path, 0, maxFile, false, func(string) bool { return true })
		default:
			fp.walk(path, 0, maxFile, true, func(name string) bool { return served(name) && (tests || !isTest(name)) })
		}
	}
	return fp
}

// walk hashes the files under path that keep accepts. Like OPA's loader it
// follows symlinks; skipHidden skips hidden entries below the top.
func (fp fingerprint) walk(path string, depth int, maxFile int64, skipHidden bool, keep func(name string) bool) {
	info, err := os.Stat(path)
	if err != nil {
		fp[path] = "error: " + err.Error()
		return
	}
	if depth > 0 && skipHidden && strings.HasPrefix(info.Name(), ".") {
		return
	}
	if !info.IsDir() {
		if depth == 0 || keep(info.Name()) {
			fp.addFile(path, maxFile)
		}
		return
	}
	if depth >= maxWalkDepth {
		fp[path] = "error: directories nested too deep (a symlink loop?)"
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		fp[path] = "error: " + err.Error()
		return
	}
	for _, e := range entries {
		fp.walk(filepath.Join(path, e.Name()), depth+1, maxFile, skipHidden, keep)
	}
}

func (fp fingerprint) addFile(path string, maxFile int64) {
	// Never blocks on a FIFO, never reads past the limit: a file the load
	// will refuse is summed up by its size and time, which still change.
	f, info, err := pathread.Open(path)
	if err != nil {
		fp[path] = "error: " + err.Error()
		return
	}
	defer f.Close()
	if info.Size() > maxFile {
		fp[path] = fmt.Sprintf("over the limit: %d bytes, modified %s", info.Size(), info.ModTime())
		return
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxFile+1)); err != nil {
		fp[path] = "error: " + err.Error()
		return
	}
	fp[path] = hex.EncodeToString(h.Sum(nil))
}

// diff lists the files added, changed or removed since old, sorted.
func (fp fingerprint) diff(old fingerprint) []string {
	var out []string
	for path, sum := range fp {
		if old[path] != sum {
			out = append(out, path)
		}
	}
	for path := range old {
		if _, ok := fp[path]; !ok {
			out = append(out, path)
		}
	}
	return sortedUnique(out)
}

func (fp fingerprint) equal(old fingerprint) bool {
	if len(fp) != len(old) {
		return false
	}
	for path, sum := range fp {
		if s, ok := old[path]; !ok || s != sum {
			return false
		}
	}
	return true
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return s
	}
	slices.Sort(s)
	return slices.Compact(s)
}
