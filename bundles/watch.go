package bundles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher turns file-system events under the policy paths into one call of
// changed per burst: editors save in several steps (write a temporary
// file, rename it over, chmod), and a checkout touches many files at once.
//
// fsnotify watches single directories, so every directory of a tree is
// watched, new ones as they appear; a file path is watched through its
// parent directory, because a rename-save replaces the file's inode.
type watcher struct {
	fs      *fsnotify.Watcher
	paths   []string
	isDir   map[string]bool // by path, as last seen by sync
	quiet   time.Duration   // a burst ends after this long without events
	maxWait time.Duration   // but changed is called at least this often
	rescan  time.Duration   // also call changed this often (0: never)
	changed func(reason string)
	log     *slog.Logger
}

func newWatcher(paths []string, quiet, rescan time.Duration, changed func(string), log *slog.Logger) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching policy files: %w", err)
	}
	w := &watcher{
		fs:      fw,
		isDir:   map[string]bool{},
		quiet:   quiet,
		maxWait: 5 * quiet,
		rescan:  rescan,
		changed: changed,
		log:     log,
	}
	for _, p := range paths {
		w.paths = append(w.paths, filepath.Clean(p))
	}
	w.sync()
	return w, nil
}

// run handles events until ctx ends, then closes the watcher.
func (w *watcher) run(ctx context.Context) {
	defer w.fs.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var burstStart time.Time
	pending := false
	schedule := func() {
		now := time.Now()
		if !pending {
			pending, burstStart = true, now
		}
		// Wait for quiet, but a file rewritten without pause must still
		// be picked up.
		d := min(w.quiet, burstStart.Add(w.maxWait).Sub(now))
		timer.Reset(max(d, 0))
	}
	var tick <-chan time.Time
	if w.rescan > 0 {
		t := time.NewTicker(w.rescan)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod || !w.relevant(ev.Name) {
				continue // touch, chmod: the content is the same
			}
			if ev.Has(fsnotify.Create) {
				w.addTree(ev.Name) // a new subdirectory: watch it before files land in it
			}
			schedule()
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow lost events: look at everything again.
			w.log.Warn("watching policy files", "err", err, "overflow", errors.Is(err, fsnotify.ErrEventOverflow))
			schedule()
		case <-timer.C:
			pending = false
			w.sync()
			w.changed("watch")
		case <-tick:
			w.sync()
			w.changed("rescan")
		}
	}
}

// relevant tells whether an event on name may change the policy.
func (w *watcher) relevant(name string) bool {
	for _, p := range w.paths {
		if w.isDir[p] {
			if name == p || strings.HasPrefix(name, p+string(filepath.Separator)) {
				return true
			}
			continue
		}
		// A file path: the file itself, or Kubernetes' ..data symlink and
		// ..timestamp directories next to it.
		if name == p || filepath.Dir(name) == filepath.Dir(p) && strings.HasPrefix(filepath.Base(name), "..") {
			return true
		}
	}
	return false
}

// sync adds a watch for every directory that needs one and lacks it; the
// kernel drops the watches of deleted directories.
func (w *watcher) sync() {
	for _, p := range w.paths {
		info, err := os.Stat(p)
		if err != nil {
			continue // the rescan reports it, and sync runs again after
		}
		w.isDir[p] = info.IsDir()
		if info.IsDir() {
			w.addTree(p)
		} else {
			w.add(filepath.Dir(p))
		}
	}
}

// addTree watches dir and the directories below it, skipping hidden ones
// as the loader does.
func (w *watcher) addTree(dir string) {
	watched := map[string]bool{}
	for _, p := range w.fs.WatchList() {
		watched[p] = true
	}
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		info, err := os.Stat(path)
		if err != nil || !info.IsDir() || depth >= maxWalkDepth {
			return
		}
		if depth > 0 && strings.HasPrefix(info.Name(), ".") {
			return
		}
		if !watched[path] {
			w.add(path)
			watched[path] = true
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
				walk(filepath.Join(path, e.Name()), depth+1)
			}
		}
	}
	depth := 0
	if !slices.Contains(w.paths, dir) {
		depth = 1 // below a root: hidden directories are skipped
	}
	walk(dir, depth)
}

func (w *watcher) add(dir string) {
	if err := w.fs.Add(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.log.Warn("watching policy directory", "dir", dir, "err", err)
	}
}

// Watch calls changed once per burst of changes to paths (files or
// directory trees), debounced as the policy files are, and every rescan
// as well when rescan is positive, until ctx ends. Callers other than the
// Reloader use it to follow files that are not policy, such as a
// configuration file, with the same latency; debounce ≤ 0 means
// DefaultDebounce.
func Watch(ctx context.Context, paths []string, debounce, rescan time.Duration, changed func(), log *slog.Logger) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := newWatcher(paths, debounce, max(rescan, 0), func(string) { changed() }, log)
	if err != nil {
		return err
	}
	w.run(ctx)
	return nil
}
