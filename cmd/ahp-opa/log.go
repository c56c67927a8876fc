package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lmittmann/tint"

	"github.com/ahp-opa/ahp-opa/internal/redact"
)

// newLogger writes to w, which is always stderr in the binary: stdout
// belongs to the protocol (B-STDIO-2). Format "auto" picks tint's coloured
// text on a terminal and JSON elsewhere, where a machine reads the logs.
// Every record passes the redactor first, at every level: some of what is
// logged (OPA errors, library messages) quotes the input verbatim.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	h, err := newLogHandler(w, level, format)
	if err != nil {
		return nil, err
	}
	return slog.New(redact.Handler(h, redact.Default())), nil
}

func newLogHandler(w io.Writer, level, format string) (slog.Handler, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("configuration: log_level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: readableDuration}
	switch strings.ToLower(format) {
	case "auto":
		if isTerminal(w) {
			return tint.NewHandler(w, &tint.Options{Level: lvl}), nil
		}
		return slog.NewJSONHandler(w, opts), nil
	case "text":
		return tint.NewHandler(w, &tint.Options{Level: lvl, NoColor: !isTerminal(w)}), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, fmt.Errorf("configuration: log_format %q: want auto, text or json", format)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// readableDuration writes a duration as Go spells it ("218ms"), not as the
// nanoseconds JSON would otherwise carry (218084000), which nobody reads
// right at a glance.
func readableDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
