package redact

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Handler returns a slog.Handler that masks every secret in a record's
// message and string attributes (errors and Stringers included) before
// next sees them. It sits in front of every sink because some text, such
// as an OPA error that quotes the input, is produced by code that does not
// know what is secret.
//
// Attributes added with WithAttrs are masked when the first record is
// handled, not before: a request's logger carries them on every request
// but rarely logs, and masking is a dozen regular expressions per string.
// The sinks must decide Enabled by level alone, as slog's own handlers
// and tint do: it is asked of the root sink.
func Handler(next slog.Handler, r *Redactor) slog.Handler {
	if r == nil {
		r = Default()
	}
	return &handler{root: next, next: func() slog.Handler { return next }, r: r}
}

type handler struct {
	root slog.Handler        // answers Enabled
	next func() slog.Handler // the sink with the masked attributes and groups so far
	r    *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.root.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next().Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	for i := range attrs {
		attrs[i].Value = attrs[i].Value.Resolve() // a LogValuer is read now, as slog's handlers do
	}
	parent := h.next
	return &handler{root: h.root, r: h.r, next: sync.OnceValue(func() slog.Handler {
		masked := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			masked[i] = h.attr(a)
		}
		return parent().WithAttrs(masked)
	})}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	parent := h.next
	return &handler{root: h.root, r: h.r, next: sync.OnceValue(func() slog.Handler {
		return parent().WithGroup(name)
	})}
}

// attr masks one attribute. Values that print as text (strings, errors,
// Stringers, anything else of kind Any) become masked strings; numbers,
// times and booleans cannot hold a secret and pass unchanged.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		masked := make([]any, len(group))
		for i, g := range group {
			masked[i] = h.attr(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		x := v.Any()
		switch x.(type) {
		case map[string]any, []any: // decoded JSON: masked by field name first
			x = h.r.Value(x, "")
		}
		return slog.String(a.Key, h.r.String(fmt.Sprint(x)))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
