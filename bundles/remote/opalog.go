package remote

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/logging"
)

// opaLogger passes the logs of OPA's downloader and REST client to slog.
// OPA's info messages are chatter to an ahp-opa operator: they go to debug.
type opaLogger struct {
	log   *slog.Logger
	level *atomic.Uint32
}

func newOPALogger(log *slog.Logger) logging.Logger {
	l := &opaLogger{log: log, level: new(atomic.Uint32)}
	lvl := logging.Info
	if log.Enabled(context.Background(), slog.LevelDebug) {
		lvl = logging.Debug
	}
	l.level.Store(uint32(lvl))
	return l
}

func (l *opaLogger) emit(lvl slog.Level, format string, a []any) {
	if !l.log.Enabled(context.Background(), lvl) {
		return
	}
	l.log.Log(context.Background(), lvl, fmt.Sprintf(format, a...), "component", "opa")
}

func (l *opaLogger) Debug(f string, a ...any) { l.emit(slog.LevelDebug, f, a) }
func (l *opaLogger) Info(f string, a ...any)  { l.emit(slog.LevelDebug, f, a) }
func (l *opaLogger) Warn(f string, a ...any)  { l.emit(slog.LevelWarn, f, a) }
func (l *opaLogger) Error(f string, a ...any) { l.emit(slog.LevelError, f, a) }

func (l *opaLogger) WithFields(fields map[string]any) logging.Logger {
	args := make([]any, 0, 2*len(fields))
	for _, k := range sortedKeys(fields) {
		args = append(args, k, fields[k])
	}
	return &opaLogger{log: l.log.With(args...), level: l.level}
}

func (l *opaLogger) GetLevel() logging.Level  { return logging.Level(l.level.Load()) }
func (l *opaLogger) SetLevel(v logging.Level) { l.level.Store(uint32(v)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
