package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/pathread"
)

// FileConfig configures the audit log file.
type FileConfig struct {
	// Path is the log file; "-" writes to standard output instead (not
	// with the stdio binding, whose stdout carries the protocol).
	Path       string `koanf:"path"`
	MaxSizeMB  int    `koanf:"max_size_mb"` // rotate past this size; default 100
	MaxBackups int    `koanf:"max_backups"` // rotated files kept; 0 keeps all
}

// Stdout is the FileConfig.Path that sends records to standard output.
const Stdout = "-"

// ErrNotAuditLog is returned for a path that ahp-opa will not write to:
// anything but a regular file that is empty, new, or already holds audit
// records. Nothing the user points ahp-opa at is renamed, truncated or
// replaced unless it is proven to be an audit log.
var ErrNotAuditLog = errors.New("not an ahp-opa audit log")

// File is an append-only JSONL file with size-based rotation. A record is
// one line written in one call: a kill -9 leaves whole lines, and a failed
// write (a full disk) is cut back to the last whole line, so that a partial
// record never merges with the next.
type File struct {
	mu      sync.Mutex
	path    string // symlinks resolved once, at open
	maxSize int64
	backups int
	now     func() time.Time

	f   *os.File // nil: the next write opens the path
	buf []byte
	// cut, when not negative, is the size the file must be cut back to
	// before the next write: a failed write may have left part of a line.
	cut int64
	// newline: the file did not end in one (a crash of an older version,
	// or a cut that failed); the next record starts on a line of its own.
	newline bool
}

// OpenFile opens (creating if needed) the audit log. It fails at once,
// naming the path and the reason, for anything that is not an audit log.
func OpenFile(cfg FileConfig) (*File, error) {
	if cfg.MaxSizeMB <= 0 {
		cfg.MaxSizeMB = 100
	}
	path := cfg.Path
	if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		// Rotation renames files: resolve the link once, so that it is the
		// log, never the user's link, that moves.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("audit log %s: a symbolic link to nothing usable: %w", path, err)
		}
		path = real
	}
	f := &File{path: path, maxSize: int64(cfg.MaxSizeMB) << 20, backups: cfg.MaxBackups, now: time.Now, cut: -1}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

// open opens the log for appending: a new file it creates itself, or an
// existing one only after checking it is an audit log.
func (f *File) open() error {
	fd, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.f, f.newline = fd, false
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("audit log %s: %w", f.path, err)
	}
	info, err := os.Lstat(f.path)
	if err != nil {
		return fmt.Errorf("audit log %s: %w", f.path, err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("audit log %s: %w: it is %s", f.path, ErrNotAuditLog, pathread.Describe(info.Mode()))
	}
	endsInNewline, err := checkAuditLog(f.path)
	if err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO swapped in since the check fails to open instead
	// of blocking; the descriptor must then be the file just checked.
	fd, err = pathread.OpenAppend(f.path)
	if err != nil {
		return fmt.Errorf("audit log %s: %w", f.path, err)
	}
	if got, err := fd.Stat(); err != nil || !os.SameFile(got, info) {
		fd.Close()
		return fmt.Errorf("audit log %s: %w: replaced while it was opened", f.path, ErrNotAuditLog)
	}
	f.f, f.newline = fd, !endsInNewline
	return nil
}

// auditHead bounds how much of an existing file is read to recognise it.
const auditHead = 1 << 20

// checkAuditLog accepts an empty file or one whose first line is an audit
// record, and reports whether the file ends in a newline.
func checkAuditLog(path string) (endsInNewline bool, err error) {
	r, info, err := pathread.Open(path)
	if err != nil {
		return false, fmt.Errorf("audit log: %w", err)
	}
	defer r.Close()
	if info.Size() == 0 {
		return true, nil
	}
	line, err := bufio.NewReaderSize(io.LimitReader(r, auditHead), auditHead).ReadSlice('\n')
	if err != nil {
		return false, fmt.Errorf("audit log %s: %w: its first line is not an audit record", path, ErrNotAuditLog)
	}
	var head struct {
		Time *time.Time `json:"time"`
		Kind string     `json:"kind"`
	}
	known := []string{KindDecision, KindObservation, KindAnomaly, KindNoOutcome}
	if json.Unmarshal(line, &head) != nil || head.Time == nil || !slices.Contains(known, head.Kind) {
		return false, fmt.Errorf("audit log %s: %w: its first line is not an audit record", path, ErrNotAuditLog)
	}
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, info.Size()-1); err != nil {
		return false, fmt.Errorf("audit log %s: %w", path, err)
	}
	return last[0] == '\n', nil
}

// Write appends one record as one line, or nothing.
func (f *File) Write(r *Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	f.buf = f.buf[:0]
	if f.f == nil {
		if err := f.open(); err != nil {
			return err
		}
	}
	if f.cut >= 0 {
		if err := f.f.Truncate(f.cut); err != nil {
			return fmt.Errorf("writing audit record: cutting a partial line from %s: %w", f.path, err)
		}
		f.cut = -1
	}
	info, err := f.f.Stat()
	if err != nil {
		return fmt.Errorf("writing audit record to %s: %w", f.path, err)
	}
	size := info.Size()
	if size > 0 && size+int64(len(b))+1 > f.maxSize {
		if err := f.rotate(info); err != nil {
			return fmt.Errorf("rotating audit log %s: %w", f.path, err)
		}
		size = 0
	}
	if f.newline && size > 0 {
		f.buf = append(f.buf, '\n')
	}
	f.buf = append(append(f.buf, b...), '\n')
	if _, err := f.f.Write(f.buf); err != nil {
		// Whole lines or nothing: cut back what part of the line got
		// out; if even that fails, the next write tries first.
		if terr := f.f.Truncate(size); terr != nil {
			f.cut = size
		}
		return fmt.Errorf("writing audit record to %s: %w", f.path, err)
	}
	f.newline = false
	return nil
}

// backupLayout names rotated files: audit.jsonl.20261202T180405.000.
const backupLayout = "20060102T150405.000"

// rotate moves the current file aside and starts a new one. It only ever
// renames the file it holds open, and only while the path still names it.
func (f *File) rotate(held fs.FileInfo) error {
	cur, err := os.Lstat(f.path)
	f.f.Close()
	f.f = nil
	if err != nil || !os.SameFile(cur, held) {
		// Moved away (external rotation) or replaced: leave it be.
		return f.open()
	}
	backup := f.path + "." + f.now().UTC().Format(backupLayout)
	for i := 1; ; i++ {
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			break
		}
		backup = fmt.Sprintf("%s.%s.%d", f.path, f.now().UTC().Format(backupLayout), i)
	}
	if err := os.Rename(f.path, backup); err != nil {
		return err
	}
	if err := f.open(); err != nil {
		return err
	}
	f.prune()
	return nil
}

// prune removes the oldest rotated files beyond the number to keep: only
// files named as rotate names them that hold audit records.
func (f *File) prune() {
	if f.backups <= 0 {
		return
	}
	dir, base := filepath.Split(f.path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var ours []string // names sort by time
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || !e.Type().IsRegular() || len(stamp) < len(backupLayout) {
			continue
		}
		if _, err := time.Parse(backupLayout, stamp[:len(backupLayout)]); err != nil {
			continue
		}
		if _, err := checkAuditLog(filepath.Join(dir, e.Name())); err != nil {
			continue
		}
		ours = append(ours, e.Name())
	}
	slices.Sort(ours)
	for len(ours) > f.backups {
		os.Remove(filepath.Join(dir, ours[0]))
		ours = ours[1:]
	}
}

// Reopen closes the file; the next write opens the path again, with the
// same checks as at start. Call it on SIGHUP after an external tool has
// moved the file away.
func (f *File) Reopen() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// Close closes the file.
func (f *File) Close() error { return f.Reopen() }

var _ io.Closer = (*File)(nil)

// Stream writes records to a stream such as standard output, one line
// per write call. When a write fails part-way (the reader went away) the
// line is ended at once, so that a partial record stands alone instead of
// merging with the next one.
type Stream struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewStream writes records to w.
func NewStream(w io.Writer) *Stream { return &Stream{w: w} }

// Write writes one record as one line.
func (s *Stream) Write(r *Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	s.buf = append(append(s.buf[:0], b...), '\n')
	n, err := s.w.Write(s.buf)
	if err != nil {
		if n > 0 && n < len(s.buf) {
			s.w.Write([]byte{'\n'})
		}
		return fmt.Errorf("writing audit record: %w", err)
	}
	return nil
}
