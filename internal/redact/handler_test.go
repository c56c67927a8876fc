package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestHandlerMasksEveryStringAtEveryLevel(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cmd := "GITHUB_TOKEN=" + token + " gh pr list"
	tests := []struct {
		name string
		log  func(*slog.Logger)
	}{
		{"message", func(l *slog.Logger) { l.Debug("running " + cmd) }},
		{"string attr", func(l *slog.Logger) { l.Info("x", "command", cmd) }},
		{"error attr", func(l *slog.Logger) { l.Warn("x", "err", errors.New(`to_number: parsing "`+cmd+`"`)) }},
		{"group", func(l *slog.Logger) { l.Error("x", slog.Group("event", "input", cmd)) }},
		{"with attrs", func(l *slog.Logger) { l.With("command", cmd).Debug("x") }},
		{"with group", func(l *slog.Logger) { l.WithGroup("g").Debug("x", "command", cmd) }},
		{"with attrs in a group", func(l *slog.Logger) { l.With("a", 1).WithGroup("g").With("command", cmd).Info("x") }},
		{"any value", func(l *slog.Logger) { l.Debug("x", "input", map[string]string{"command": cmd}) }},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "text"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				opts := &slog.HandlerOptions{Level: slog.LevelDebug}
				var next slog.Handler = slog.NewJSONHandler(&buf, opts)
				if format == "text" {
					next = slog.NewTextHandler(&buf, opts)
				}
				tt.log(slog.New(Handler(next, nil)))
				out := buf.String()
				if strings.Contains(out, token) || strings.Contains(out, token[4:20]) {
					t.Fatalf("token reached the log: %s", out)
				}
				if !strings.Contains(out, Mask) {
					t.Fatalf("the log does not show that a value was redacted: %s", out)
				}
			})
		}
	}
}

func TestHandlerKeepsOrdinaryValues(t *testing.T) {
	var buf bytes.Buffer
	slog.New(Handler(slog.NewJSONHandler(&buf, nil), nil)).Info("denied", "code", "dev.ahp-opa.git.force-push", "matches", 2)
	out := buf.String()
	for _, want := range []string{`"msg":"denied"`, `"code":"dev.ahp-opa.git.force-push"`, `"matches":2`} {
		if !strings.Contains(out, want) {
			t.Errorf("log %s lacks %s", out, want)
		}
	}
}

// countingSink counts the attributes its WithAttrs is given.
type countingSink struct {
	slog.Handler
	attrs *atomic.Int64
}

func (c countingSink) WithAttrs(attrs []slog.Attr) slog.Handler {
	c.attrs.Add(int64(len(attrs)))
	return countingSink{c.Handler.WithAttrs(attrs), c.attrs}
}

// TestHandlerMasksWithAttrsWhenUsed: a logger's attributes are masked once,
// when it first logs, and never for a logger that does not log.
func TestHandlerMasksWithAttrsWhenUsed(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	var buf bytes.Buffer
	n := new(atomic.Int64)
	log := slog.New(Handler(countingSink{slog.NewJSONHandler(&buf, nil), n}, nil))
	quiet := log.With("command", "echo "+token)
	quiet.Debug("below the level")
	if n.Load() != 0 || buf.Len() != 0 {
		t.Fatalf("attributes masked for a logger that wrote nothing (%d), log %q", n.Load(), buf.String())
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { quiet.Info("x") })
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("attributes masked %d times, want once", n.Load())
	}
	if out := buf.String(); strings.Contains(out, token) || strings.Count(out, Mask) != 4 {
		t.Errorf("log %s", out)
	}
}

// TestHandlerMasksSecretFields: a decoded JSON value logged as it is, or
// text that quotes one, is masked by field name too.
func TestHandlerMasksSecretFields(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"map value", func(l *slog.Logger) {
			l.Info("x", "input", map[string]any{"password": "correct horse", "env": map[string]any{"AWS_SECRET_ACCESS_KEY": "wJalr XUtn"}})
		}, `{"level":"INFO","msg":"x","input":"map[env:map[AWS_SECRET_ACCESS_KEY:[REDACTED]] password:[REDACTED]]"}`},
		{"array of env strings", func(l *slog.Logger) {
			l.Info("x", "env", []any{"DB_PASSWORD=pa ss", "HOME=/root"})
		}, `{"level":"INFO","msg":"x","env":"[DB_PASSWORD=[REDACTED] HOME=/root]"}`},
		{"quoted JSON in an error", func(l *slog.Logger) {
			l.Warn("x", "err", errors.New(`eval_type_error: object {"token": "t0k3n value"} is not a string`))
		}, `{"level":"WARN","msg":"x","err":"eval_type_error: object {\"token\": \"[REDACTED]\"} is not a string"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}
			tt.log(slog.New(Handler(slog.NewJSONHandler(&buf, opts), nil)))
			if got := strings.TrimSpace(buf.String()); got != tt.want {
				t.Errorf("log\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}
