package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileControls are the bytes and runes that, printed raw, drive a
// terminal: they may not reach the text report or the JSON report as they
// are.
func hostileControl(r rune) bool {
	return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// TestReplayTextEscapesControls: a recorded command, tool name, event id
// or rule code that carries terminal escapes shows them escaped, visibly,
// in the text report; nothing in it can move the cursor, set the
// clipboard or reorder the line.
func TestReplayTextEscapesControls(t *testing.T) {
	tests := []struct {
		name      string
		id, tool  string
		command   string
		code      string
		wantRow   []string // the changed event's row, field by field
		wantRules string   // the rule's row in the rule table, first field
	}{
		{
			name: "OSC 52 sets the clipboard", id: "e1", tool: "Bash", code: "c.osc",
			command: "echo hi\x1b]52;c;cm0gLXJmIH4K\x07",
			wantRow: []string{"e1", "Bash", "echo", `hi\x1b]52;c;cm0gLXJmIH4K\a`},
		},
		{
			name: "CSI clears the screen and moves the cursor", id: "e1", tool: "Bash", code: "c.csi",
			command: "ls\x1b[2J\x1b[1;1Hrm -rf ~",
			wantRow: []string{"e1", "Bash", `ls\x1b[2J\x1b[1;1Hrm`, "-rf", "~"},
		},
		{
			name: "bare ESC and BEL", id: "e1", tool: "Bash", code: "c.esc",
			command: "a\x1bb\x07c",
			wantRow: []string{"e1", "Bash", `a\x1bb\ac`},
		},
		{
			name: "C1 CSI and OSC", id: "e1", tool: "Bash", code: "c.c1",
			command: "x\u009b2Jy\u009d52;c;Zm9v\u009c",
			wantRow: []string{"e1", "Bash", `x\u009b2Jy\u009d52;c;Zm9v\u009c`},
		},
		{
			name: "bidi overrides reorder the line", id: "e1", tool: "Bash", code: "c.bidi",
			command: "cat \u202egnp.exe\u202c \u2066x\u2069 \u202ay\u202b",
			wantRow: []string{"e1", "Bash", "cat", `\u202egnp.exe\u202c`, `\u2066x\u2069`, `\u202ay\u202b`},
		},
		{
			name: "CR in the tool name hides the row", id: "e1", tool: "Bash\rEvil", code: "c.cr",
			command: "ls",
			wantRow: []string{"e1", `Bash\rEvil`, "ls"},
		},
		{
			name: "escapes in the event id", id: "e\x1b[8m1", tool: "Bash", code: "c.id",
			command: "ls",
			wantRow: []string{`e\x1b[8m1`, "Bash", "ls"},
		},
		{
			name: "tab and escapes in the rule code", id: "e1", tool: "Bash", code: "c\t\x1b]0;title\x07",
			command:   "ls",
			wantRow:   []string{"e1", "Bash", "ls", "deny", "→", "allow", "newly", "allowed", `c\t\x1b]0;title\a`},
			wantRules: `c\t\x1b]0;title\a`,
		},
		{
			name: "DEL and NEL", id: "e1", tool: "Bash\u0085", code: "c.del",
			command: "a\x7fb",
			wantRow: []string{"e1", `Bash\u0085`, `a\x7fb`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := hostileReport(t, tt.id, tt.tool, tt.command, tt.code)
			var buf bytes.Buffer
			if err := rep.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, r := range out {
				if hostileControl(r) {
					t.Fatalf("the text report holds %U raw:\n%q", r, out)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("the text report is not UTF-8: %q", out)
			}
			row := fieldsOfLine(out, tt.wantRow[0]+" ")
			// The time sits between the id and the tool.
			want := append([]string{tt.wantRow[0], "2026-03-02T09:00:00Z"}, tt.wantRow[1:]...)
			if got := row[:min(len(row), len(want))]; !equalFields(got, want) {
				t.Errorf("changed row:\n got %q\nwant %q (prefix)", row, want)
			}
			if tt.wantRules != "" {
				if rule := fieldsOfLine(out, tt.wantRules+" "); len(rule) == 0 || rule[0] != tt.wantRules {
					t.Errorf("the rule table has no row %q:\n%s", tt.wantRules, out)
				}
			}
		})
	}
}

// TestPrintable: the escapes, exactly, including bytes a JSON log cannot
// carry but a report of another source could.
func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ls -l", "ls -l"},
		{"é → ü", "é → ü"},
		{"\x1b]52;c;eA==\x07", `\x1b]52;c;eA==\a`},
		{"a\rb\nc\td", `a\rb\nc\td`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u0085\u009b\u009f", `\u0085\u009b\u009f`},
		{"\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`},
		{"\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"a\xffb\xc3", `a\xffb\xc3`},
		{"zero\u200bwidth", `zero\u200bwidth`},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestReplayJSONEscapesControls: the JSON report is valid JSON that gives
// back every recorded string unchanged, and holds none of them raw.
func TestReplayJSONEscapesControls(t *testing.T) {
	tests := []struct{ name, command, want string }{
		{"ESC and BEL", "a\x1b]52;c;eA==\x07", `"a\u001b]52;c;eA==\u0007"`},
		{"C1 CSI", "x\u009b2J", `"x\u009b2J"`},
		{"bidi override", "cat \u202egnp.exe", `"cat \u202egnp.exe"`},
		{"isolates", "\u2066x\u2069", `"\u2066x\u2069"`},
		{"DEL", "a\x7fb", `"a\u007fb"`},
		{"plain", "ls -l é", `"ls -l é"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := hostileReport(t, "e1", "Bash", tt.command, "c.x")
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, r := range out {
				if hostileControl(r) {
					t.Fatalf("the JSON report holds %U raw:\n%q", r, out)
				}
			}
			if !strings.Contains(out, `"subject": `+tt.want) {
				t.Errorf("subject not written as %s:\n%s", tt.want, out)
			}
			var back Report
			if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if back.Changed[0].Subject != rep.Changed[0].Subject {
				t.Errorf("subject read back %q, want %q", back.Changed[0].Subject, rep.Changed[0].Subject)
			}
		})
	}
}

// hostileReport replays one recorded deny, with the given id, tool,
// command and code, that allowAll now allows.
func hostileReport(t *testing.T, id, tool, command, code string) *Report {
	t.Helper()
	rec := decisionRecord(call{id: id, tool: tool, command: command, decision: "deny", reason: "r", codes: []string{code}})
	line, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(context.Background(), bytes.NewReader(line), allowAll{}, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changed) != 1 {
		t.Fatalf("changed %d events, want 1", len(rep.Changed))
	}
	return rep
}

// fieldsOfLine returns the fields of the first line of out that starts
// with prefix.
func fieldsOfLine(out, prefix string) []string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) {
			return strings.Fields(line)
		}
	}
	return nil
}

func equalFields(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// BenchmarkReplayDistinctRules replays 200,000 recorded denies, each with
// its own rule code, that are now allowed, and reports the heap the
// finished report keeps (retained-MiB): the rule table must stay bounded
// whatever a log holds.
func BenchmarkReplayDistinctRules(b *testing.B) {
	const n = 200_000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rep, err := Replay(context.Background(), distinctRules(n), allowAll{}, ReplayOptions{})
		if err != nil || rep.NewlyAllowed != n {
			b.Fatalf("newly allowed %d of %d: %v", rep.NewlyAllowed, n, err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "retained-MiB")
		b.ReportMetric(float64(len(rep.Rules)), "rules")
		runtime.KeepAlive(rep)
	}
}

// distinctRules streams n decision records, denied by a rule code of
// their own, without holding the log in memory.
func distinctRules(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		rec := decisionRecord(call{id: "e", command: "ls", decision: "deny", reason: "r"})
		enc := json.NewEncoder(pw)
		for i := range n {
			rec.EventID = fmt.Sprint("e", i)
			rec.Codes = []string{fmt.Sprintf("com.example.generated.rule-%08d", i)}
			if err := enc.Encode(rec); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}
