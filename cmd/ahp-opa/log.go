package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lmittmann/tint"
)

// newLogger writes to w, which is always stderr in the binary: stdout
// belongs to the protocol (B-STDIO-2). Format "auto" picks tint's coloured
// text on a terminal and JSON elsewhere, where a machine reads the logs.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("configuration: log_level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "auto":
		if isTerminal(w) {
			return slog.New(tint.NewHandler(w, &tint.Options{Level: lvl})), nil
		}
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(tint.NewHandler(w, &tint.Options{Level: lvl, NoColor: !isTerminal(w)})), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
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
