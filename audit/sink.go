package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
)

// FileConfig configures the audit log file.
type FileConfig struct {
	Path       string `koanf:"path"`
	MaxSizeMB  int    `koanf:"max_size_mb"` // rotate past this size
	MaxBackups int    `koanf:"max_backups"` // rotated files kept; 0 keeps all
}

// File is an append-only JSONL file with size-based rotation. Each record
// goes to the file in a single write, so a crash or kill -9 leaves whole
// lines only.
type File struct {
	mu  sync.Mutex
	out *lumberjack.Logger
	buf []byte
}

// OpenFile opens (creating if needed) the audit log. It fails early when the
// file cannot be written, rather than at the first decision.
func OpenFile(cfg FileConfig) (*File, error) {
	if cfg.MaxSizeMB <= 0 {
		cfg.MaxSizeMB = 100
	}
	l := &lumberjack.Logger{Filename: cfg.Path, MaxSize: cfg.MaxSizeMB, MaxBackups: cfg.MaxBackups}
	if _, err := l.Write(nil); err != nil {
		return nil, fmt.Errorf("audit log %s: %w", cfg.Path, err)
	}
	return &File{out: l}, nil
}

// Write appends one record as one line.
func (f *File) Write(r *Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	f.buf = append(append(f.buf[:0], b...), '\n')
	if _, err := f.out.Write(f.buf); err != nil {
		return fmt.Errorf("writing audit record: %w", err)
	}
	return nil
}

// Reopen closes the file; the next write opens it again. Call it on SIGHUP
// after an external tool has moved the file away.
func (f *File) Reopen() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.Close()
}

// Close closes the file.
func (f *File) Close() error { return f.Reopen() }

var _ io.Closer = (*File)(nil)
