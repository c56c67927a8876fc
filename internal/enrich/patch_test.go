package enrich

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestParsePatch pins the reading of Codex's apply_patch grammar
// (patch.go): what Codex applies, and what it rejects.
func TestParsePatch(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  []patchOp // nil with ok false: rejected
		ok    bool
	}{
		{"every op", "*** Begin Patch\n*** Add File: a.py\n+x\n*** Delete File: b.py\n*** Update File: c.py\n*** Move to: d.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch",
			[]patchOp{{"add", "a.py", ""}, {"delete", "b.py", ""}, {"update", "c.py", "d.py"}}, true},
		{"no ops", "*** Begin Patch\n*** End Patch\n", nil, true},
		{"padded markers", "  *** Begin Patch \n*** Delete File: a\n *** End Patch\t\n", []patchOp{{"delete", "a", ""}}, true},
		{"CRLF lines", "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n", []patchOp{{"add", "a", ""}}, true},
		{"header indented with spaces", "*** Begin Patch\n   *** Add File: a\n+x\n*** End Patch", []patchOp{{"add", "a", ""}}, true},
		{"header indented with a tab", "*** Begin Patch\n\t*** Delete File: a\n*** End Patch", []patchOp{{"delete", "a", ""}}, true},
		{"header padded with other blanks", "*** Begin Patch\n\u00a0\u3000*** Delete File: a\u2003\n*** End Patch", []patchOp{{"delete", "a", ""}}, true},
		{"path keeps inner and leading blanks", "*** Begin Patch\n*** Delete File:  my file \n*** End Patch", []patchOp{{"delete", " my file", ""}}, true},
		{"indented header after an add", "*** Begin Patch\n*** Add File: a\n+x\n\t*** Update File: b\n@@\n-y\n+z\n*** End Patch",
			[]patchOp{{"add", "a", ""}, {"update", "b", ""}}, true},
		{"update without context", "*** Begin Patch\n*** Update File: a\n import x\n+y\n*** End Patch", []patchOp{{"update", "a", ""}}, true},
		{"update, blank lines between chunks", "*** Begin Patch\n*** Update File: a\n@@\n-x\n\n  \t\n@@ g\n+y\n*** End of File\n*** Delete File: b\n*** End Patch",
			[]patchOp{{"update", "a", ""}, {"delete", "b", ""}}, true},
		{"space-indented header in an update is context", "*** Begin Patch\n*** Update File: a\n@@\n *** Add File: b\n+x\n*** End Patch", []patchOp{{"update", "a", ""}}, true},
		{"header in added text is text", "*** Begin Patch\n*** Add File: a\n+*** Add File: b\n*** End Patch", []patchOp{{"add", "a", ""}}, true},
		{"indented move is not a move", "*** Begin Patch\n*** Update File: a\n *** Move to: b\n+x\n*** End Patch", []patchOp{{"update", "a", ""}}, true},
		{"heredoc envelope", "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n", []patchOp{{"delete", "a", ""}}, true},
		{"heredoc, double quotes", "<<\"EOF\"\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF", []patchOp{{"delete", "a", ""}}, true},

		{"empty", "", nil, false},
		{"no end", "*** Begin Patch\n*** Delete File: a\n", nil, false},
		{"text before", "hello\n*** Begin Patch\n*** Delete File: a\n*** End Patch", nil, false},
		{"header without a path", "*** Begin Patch\n*** Delete File: \n*** End Patch", nil, false},
		{"not a header", "*** Begin Patch\n*** Remove File: a\n*** End Patch", nil, false},
		{"empty update", "*** Begin Patch\n*** Update File: a\n*** End Patch", nil, false},
		{"indented header after an update", "*** Begin Patch\n*** Update File: a\n@@\n+x\n\t*** Delete File: b\n*** End Patch", nil, false},
		{"second chunk without context", "*** Begin Patch\n*** Update File: a\n@@\n+x\n*** End of File\n+y\n*** End Patch", nil, false},
		{"chunk of context only", "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch", nil, false},
		{"end of file first", "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch", nil, false},
		{"blank line after an add", "*** Begin Patch\n*** Add File: a\n+x\n\n*** Delete File: b\n*** End Patch", nil, false},
		{"heredoc with mismatched quotes", "<<\"EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePatch(tt.patch)
			if tt.ok {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("ops = %+v, want %+v", got, tt.want)
				}
				return
			}
			if !errors.Is(err, errPatch) {
				t.Fatalf("accepted as %+v (err %v), want an error wrapping errPatch", got, err)
			}
		})
	}
}

// TestPatchPaths: the paths reported are the files Codex touches, each
// also trimmed; a patch Codex rejects reports every line that trims to a
// header.
func TestPatchPaths(t *testing.T) {
	tests := []struct {
		patch string
		want  []string
	}{
		{"*** Begin Patch\n\t*** Add File: /home/dev/.bashrc\n+x\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch", []string{"/home/dev/.bashrc", "a", "b"}},
		{"*** Begin Patch\n*** Delete File:  x\n*** End Patch", []string{" x", "x"}},
		{"*** Begin Patch\n*** Add File: a\n+*** Add File: b\n*** End Patch", []string{"a"}},
		// Rejected by Codex (an indented header inside an update): every
		// header-like line is reported, the safe side.
		{"*** Begin Patch\n*** Update File: a\n@@\n+x\n\t*** Delete File: b\n  *** Move to: c\n*** End Patch", []string{"a", "b", "c"}},
		{"no patch here", nil},
	}
	for _, tt := range tests {
		if got := patchPaths(tt.patch); !slices.Equal(got, tt.want) {
			t.Errorf("patchPaths(%q) = %q, want %q", tt.patch, got, tt.want)
		}
	}
}

// blanks are the white space characters Codex trims from a header line,
// a few of each kind.
var blanks = []string{" ", "\t", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2003", "\u3000"}

// FuzzPatch checks the patch reader against the grammar in patch.go. Any
// text: no panic, every op the parser finds is reported, and when the
// parser rejects the text every line that trims to a header is reported.
// A patch built from the grammar, each header padded with the blanks
// Codex accepts where it accepts them: accepted, with exactly its ops.
func FuzzPatch(f *testing.F) {
	f.Add([]byte("*** Begin Patch\n\t*** Add File: a\n+x\n*** End Patch"), []byte{0, 1, 2, 3})
	f.Add([]byte("<<EOF\n*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n*** End Patch\nEOF"), []byte{9, 200, 17})
	f.Add([]byte("*** Begin Patch\n*** Update File: a\n@@\n+x\n\t*** Delete File: b\n*** End Patch"), []byte{})
	f.Fuzz(func(t *testing.T, text, plan []byte) {
		s := string(text)
		reported := patchPaths(s)
		if ops, err := parsePatch(s); err == nil {
			for _, op := range ops {
				if op.Path == "" || strings.TrimSpace(op.Path) != strings.TrimRightFunc(op.Path, isBlank) {
					t.Fatalf("op %+v: a path is never empty and never ends with a blank", op)
				}
				for _, p := range []string{op.Path, op.MoveTo} {
					if p != "" && !slices.Contains(reported, p) {
						t.Fatalf("%q: path %q of %+v not reported in %q", s, p, op, reported)
					}
				}
			}
		} else if strings.Contains(s, "*** ") {
			for line := range strings.Lines(s) {
				line = strings.TrimSpace(line)
				for _, h := range []string{patchAdd, patchDelete, patchUpdate, patchMoveTo} {
					if p, ok := strings.CutPrefix(line, h); ok && p != "" && !slices.Contains(reported, p) {
						t.Fatalf("%q rejected, but header path %q not reported in %q", s, p, reported)
					}
				}
			}
		}

		patch, want := buildPatch(plan)
		got, err := parsePatch(patch)
		if err != nil {
			t.Fatalf("built patch %q rejected: %v", patch, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("built patch %q: ops %+v, want %+v", patch, got, want)
		}
		reported = patchPaths(patch)
		for _, op := range want {
			if !slices.Contains(reported, op.Path) || (op.MoveTo != "" && !slices.Contains(reported, op.MoveTo)) {
				t.Fatalf("built patch %q: %+v not reported in %q", patch, op, reported)
			}
		}
	})
}

func isBlank(r rune) bool { return strings.TrimSpace(string(r)) == "" }

// buildPatch writes a patch the grammar accepts, steered by plan: which
// ops, which paths, and which blanks pad the markers and headers. A header
// may be indented only where Codex reads it trimmed: first in the patch or
// after an add or a delete (after an update, a line starting with a blank
// belongs to the update).
func buildPatch(plan []byte) (string, []patchOp) {
	next := func() int {
		if len(plan) == 0 {
			return 0
		}
		b := plan[0]
		plan = plan[1:]
		return int(b)
	}
	pad := func() string {
		var b strings.Builder
		for range next() % 3 {
			b.WriteString(blanks[next()%len(blanks)])
		}
		return b.String()
	}
	path := func() string {
		names := []string{"a.go", "dir/b c.txt", "/home/dev/.bashrc", "~/.ssh/authorized_keys", "../x", "*** y", "+z"}
		return names[next()%len(names)]
	}
	var b strings.Builder
	var ops []patchOp
	b.WriteString(pad() + patchBegin + pad() + "\n")
	indentOK := true
	for range next() % 5 {
		lead := ""
		if indentOK {
			lead = pad()
		}
		switch next() % 3 {
		case 0:
			op := patchOp{Kind: "add", Path: path()}
			b.WriteString(lead + patchAdd + op.Path + pad() + "\n")
			for range next() % 3 {
				b.WriteString("+" + path() + "\n")
			}
			ops, indentOK = append(ops, op), true
		case 1:
			op := patchOp{Kind: "delete", Path: path()}
			b.WriteString(lead + patchDelete + op.Path + pad() + "\n")
			ops, indentOK = append(ops, op), true
		default:
			op := patchOp{Kind: "update", Path: path()}
			b.WriteString(lead + patchUpdate + op.Path + pad() + "\n")
			if next()%2 == 1 {
				op.MoveTo = path()
				b.WriteString(patchMoveTo + op.MoveTo + "\n")
			}
			for i := range 1 + next()%2 {
				if i > 0 || next()%2 == 0 {
					b.WriteString("@@ " + path() + "\n")
				}
				b.WriteString(" ctx\n-" + path() + "\n+" + path() + "\n")
			}
			if next()%2 == 1 {
				b.WriteString(patchEOF + "\n")
			}
			ops, indentOK = append(ops, op), false
		}
	}
	b.WriteString(pad() + patchEnd + pad() + "\n")
	return b.String(), ops
}
