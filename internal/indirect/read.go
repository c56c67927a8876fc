package indirect

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// Bounds of the reads one resolution may make.
const (
	// MaxFileBytes caps a file read: a package.json, Makefile or script
	// larger than this is not followed (the input says so).
	MaxFileBytes = 256 << 10
	// readTimeout bounds one read: a workspace on a stalled network file
	// system must not hold a decision.
	readTimeout = 200 * time.Millisecond
	// maxCached bounds the cache; it is emptied when full.
	maxCached = 512
)

// reader reads the files of one resolution.
type reader struct {
	ws Workspace
}

// cacheKey identifies a parse of one version of a file.
type cacheKey struct {
	kind  string
	path  string
	size  int64
	mtime int64
}

var cache = struct {
	sync.Mutex
	m map[cacheKey]any
}{m: map[cacheKey]any{}}

// parsed returns the parse of the file at abs by parse, from the cache
// when the file is unchanged. why says, for people, why it could not be
// read; notFound is set when the file does not exist.
func (r *reader) parsed(kind, abs string, parse func([]byte) any) (v any, why string, notFound bool) {
	if text, ok := r.written(abs); ok {
		// Not cached: the text is the command's, not the file's.
		if len(text) > MaxFileBytes {
			return nil, r.rel(abs) + " as written is over the " + pathread.Size(MaxFileBytes) + " limit", false
		}
		return parse([]byte(text)), "", false
	}
	real, why, notFound := r.inside(abs)
	if why != "" {
		return nil, why, notFound
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, r.rel(abs) + ": " + err.Error(), errors.Is(err, fs.ErrNotExist)
	}
	if !info.Mode().IsRegular() {
		return nil, r.rel(abs) + " is " + pathread.Describe(info.Mode()) + ", not a regular file", false
	}
	if info.Size() > MaxFileBytes {
		return nil, r.rel(abs) + " is " + pathread.Size(info.Size()) + ", over the " + pathread.Size(MaxFileBytes) + " limit", false
	}
	key := cacheKey{kind, real, info.Size(), info.ModTime().UnixNano()}
	cache.Lock()
	v, ok := cache.m[key]
	cache.Unlock()
	if ok {
		return v, "", false
	}
	b, err := pathread.Read(real, pathread.Limits{MaxBytes: MaxFileBytes, Timeout: readTimeout})
	if err != nil {
		var pe *pathread.Error
		if errors.As(err, &pe) {
			return nil, r.rel(abs) + " " + pe.Reason, false
		}
		return nil, r.rel(abs) + ": " + err.Error(), false
	}
	v = parse(b)
	cache.Lock()
	if len(cache.m) >= maxCached {
		clear(cache.m)
	}
	cache.m[key] = v
	cache.Unlock()
	return v, "", false
}

// written returns the text the command wrote to abs before running it.
func (r *reader) written(abs string) (string, bool) {
	if r.ws.Written == nil || !r.underRoot(path.Clean(abs)) {
		return "", false
	}
	text, ok := r.ws.Written[path.Clean(abs)]
	return text, ok
}

// exists reports whether p is a file written by the command or on disk.
func (r *reader) exists(p string) bool {
	if _, ok := r.written(p); ok {
		return true
	}
	_, err := os.Lstat(p)
	return err == nil
}

// inside returns the real path of abs when it and every link on the way
// stay inside a workspace root.
func (r *reader) inside(abs string) (real, why string, notFound bool) {
	abs = path.Clean(abs)
	if !r.underRoot(abs) {
		return "", r.rel(abs) + " is outside the workspace", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "no " + r.rel(abs), true
		}
		return "", r.rel(abs) + ": " + err.Error(), false
	}
	real = filepath.ToSlash(real)
	if real != abs && !r.underRealRoot(real) {
		return "", r.rel(abs) + " links outside the workspace", false
	}
	return real, "", false
}

func (r *reader) underRoot(p string) bool {
	for _, root := range r.ws.Roots {
		if within(p, path.Clean(root)) {
			return true
		}
	}
	return false
}

// underRealRoot checks p against the roots with their own links resolved:
// a workspace under /home that is itself a link is still the workspace.
func (r *reader) underRealRoot(p string) bool {
	for _, root := range r.ws.Roots {
		if within(p, path.Clean(root)) {
			return true
		}
		if real, err := filepath.EvalSymlinks(root); err == nil && within(p, filepath.ToSlash(real)) {
			return true
		}
	}
	return false
}

func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// rel names abs for people, relative to the command's directory when
// under it.
func (r *reader) rel(abs string) string {
	if within(abs, r.ws.Dir) && abs != r.ws.Dir {
		return strings.TrimPrefix(abs, strings.TrimSuffix(r.ws.Dir, "/")+"/")
	}
	return abs
}

// abs resolves a name against the command's directory.
func (r *reader) abs(name string) string {
	if path.IsAbs(name) {
		return path.Clean(name)
	}
	return path.Join(r.ws.Dir, name)
}

// findUp looks for the first of names in dir and the directories above
// it, up to the workspace root that holds dir. It returns the path found,
// or the why of the first that could not be read.
// definition reads a runner's file: file when one is given (relative to
// dir), else the first of names found from dir upwards, parsed with parse
// and cached under kind. It returns the parsed value, the file's absolute
// path and its name for reasons, or why it cannot.
func (r *reader) definition(kind, dir, file string, names []string, parse func([]byte) any) (v any, abs, name, why string) {
	if file != "" {
		abs = r.absFrom(dir, file)
	} else if abs, why = r.findUp(dir, names...); why != "" {
		return nil, "", "", why
	}
	if v, why, _ = r.parsed(kind, abs, parse); why != "" {
		return nil, "", "", why
	}
	return v, abs, r.rel(abs), ""
}

func (r *reader) findUp(dir string, names ...string) (string, string) {
	for d := dir; r.underRoot(d); d = path.Dir(d) {
		for _, n := range names {
			p := path.Join(d, n)
			if r.exists(p) {
				return p, ""
			}
		}
		if d == "/" {
			break
		}
	}
	return "", "no " + names[0] + " in " + dir + " or above it in the workspace"
}

// find looks for the first of names in dir.
func (r *reader) find(dir string, names ...string) (string, string) {
	for _, n := range names {
		p := path.Join(dir, n)
		if r.exists(p) {
			return p, ""
		}
	}
	return "", "no " + names[0] + " in " + dir
}
