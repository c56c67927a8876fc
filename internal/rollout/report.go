package rollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// changeNames are the words the text report uses.
var changeNames = map[Change]string{
	NewlyDenied: "newly denied", NewlyAllowed: "newly allowed", ReasonChanged: "reason changed",
	NowError: "now an error", NoLongerError: "no longer an error",
}

// WriteJSON writes the report as one indented JSON document. Every
// character a terminal could act on is written as a \u escape, so the
// document can be printed as it is.
func (r *Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(buf.Bytes()))
	return err
}

// escapeJSON writes the characters of encoded JSON that encoding/json
// leaves raw but a terminal acts on (DEL, C1 controls, bidi and other
// format characters) as \u escapes. Outside strings JSON is plain ASCII,
// so every such character is inside a string, where the escape means the
// same character.
func escapeJSON(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] >= 0x20 && b[i] < 0x7f || b[i] == '\n') {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == '\n' || r >= 0x20 && r < 0x7f || r >= 0x80 && strconv.IsPrint(r) {
			out = append(out, b[i:i+n]...)
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// printable returns s with every character that is not printable written
// as a Go escape (\x1b, \a, \r, \t, \u009b, \u202e) and every byte that is
// not UTF-8 as \xNN: what a log recorded is shown, visibly, and never
// acts on the terminal (cursor moves, clipboard writes, reordered text)
// or on the report's columns.
func printable(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// WriteText writes the report for a person: the counts, the counts by
// rule, then each changed event.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%d tool.before decisions replayed from %d lines\n", r.Events, r.Lines)
	if s := r.Skipped; s.Malformed+s.TooLong+s.WithoutInput > 0 {
		fmt.Fprintf(tw, "skipped: %d malformed, %d too long, %d decisions without input\n",
			s.Malformed, s.TooLong, s.WithoutInput)
	}
	fmt.Fprintln(tw)
	for _, row := range []struct {
		name string
		n    int
	}{
		{"unchanged", r.Unchanged}, {changeNames[NewlyDenied], r.NewlyDenied}, {changeNames[NewlyAllowed], r.NewlyAllowed},
		{changeNames[ReasonChanged], r.ReasonChanged}, {changeNames[NowError], r.NowError},
		{changeNames[NoLongerError], r.NoLongerError},
	} {
		if row.n > 0 || row.name == "unchanged" {
			fmt.Fprintf(tw, "%s\t%d\n", row.name, row.n)
		}
	}
	if len(r.Rules) > 0 {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "rule\tnewly denied\tnewly allowed\treason changed\tnow an error")
		for _, name := range r.sortedRules() {
			c := r.Rules[name]
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", printable(name), c.NewlyDenied, c.NewlyAllowed, c.ReasonChanged, c.NowError)
		}
		if c := r.RulesNotListed; c != (RuleCounts{}) {
			fmt.Fprintf(tw, "(%d changes by rules not listed)\t%d\t%d\t%d\t%d\n",
				c.NewlyDenied+c.NewlyAllowed+c.ReasonChanged+c.NowError, c.NewlyDenied, c.NewlyAllowed, c.ReasonChanged, c.NowError)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Changed) == 0 {
		return nil
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "id\ttime\ttool\tcommand or path\tbefore → after\tchange\trule")
	for _, c := range r.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s → %s\t%s\t%s\n", printable(c.ID), c.Time.UTC().Format(time.RFC3339),
			printable(c.Tool), printable(c.Subject), printable(c.Before), printable(c.After), changeNames[c.Change], printable(c.Rule))
	}
	if r.ChangedNotListed > 0 {
		fmt.Fprintf(tw, "… and %d more changed events\n", r.ChangedNotListed)
	}
	return tw.Flush()
}
