package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
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
