package enrich

import (
	"errors"
	"fmt"
	"strings"
)

// Codex's apply_patch envelope, read as Codex's own parser reads it, so
// that the files a policy sees are the files Codex touches. The grammar
// that parser accepts (blank means any Unicode white space, as Rust's
// str::trim and Go's strings.TrimSpace both define it):
//
//	text     = the envelope with blanks trimmed from both ends, split into
//	           lines at "\n", one "\r" dropped from the end of each
//	patch    = begin op* end | heredoc
//	heredoc  = ("<<EOF" | "<<'EOF'" | `<<"EOF"`) LF begin op* end LF line-ending-in-"EOF"
//	begin    = a line that trims to "*** Begin Patch"
//	end      = a line that trims to "*** End Patch"
//	op       = add | delete | update
//	add      = header("*** Add File: ") ("+" text)*
//	delete   = header("*** Delete File: ")
//	update   = header("*** Update File: ") ["*** Move to: " path] chunk+
//	header(m)= a line that, trimmed, starts with m; the path is the rest
//	           (so it may start with blanks but never ends with one)
//	chunk    = context* line+ ["*** End of File"]; the first chunk of an
//	           update may omit its context
//	context  = "@@" | "@@ " text
//	line     = "" | (" " | "+" | "-") text
//
// Only header lines are trimmed. Everything else is matched as written,
// which makes where a header may be indented depend on what precedes it:
// after an add's lines any indented header starts the next op, while in an
// update a line starting with a space is a context line, a line starting
// with "***" ends the update, and any other line that is not part of a
// chunk makes Codex reject the whole patch.
const (
	patchBegin    = "*** Begin Patch"
	patchEnd      = "*** End Patch"
	patchAdd      = "*** Add File: "
	patchDelete   = "*** Delete File: "
	patchUpdate   = "*** Update File: "
	patchMoveTo   = "*** Move to: "
	patchEOF      = "*** End of File"
	patchContext  = "@@"
	patchContextS = "@@ "
)

// patchOp is one file operation of a patch.
type patchOp struct {
	Kind   string // "add", "delete" or "update"
	Path   string
	MoveTo string // update only; "" when the file stays
}

// errPatch wraps every reason Codex would reject a patch.
var errPatch = errors.New("invalid patch")

// parsePatch returns the file operations of a patch as Codex parses them,
// or an error wrapping errPatch when Codex would reject it.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if !patchBounded(lines) {
		// A patch given to apply_patch as a here-document's text.
		n := len(lines)
		if n < 4 || !heredocStart(lines[0]) || !strings.HasSuffix(lines[n-1], "EOF") || !patchBounded(lines[1:n-1]) {
			return nil, fmt.Errorf("%w: it does not start with %q and end with %q", errPatch, patchBegin, patchEnd)
		}
		lines = lines[1 : n-1]
	}
	var ops []patchOp
	for rest := lines[1 : len(lines)-1]; len(rest) > 0; {
		op, n, err := parsePatchOp(rest)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = rest[n:]
	}
	return ops, nil
}

func patchBounded(lines []string) bool {
	return len(lines) >= 2 && strings.TrimSpace(lines[0]) == patchBegin && strings.TrimSpace(lines[len(lines)-1]) == patchEnd
}

func heredocStart(line string) bool {
	switch strings.TrimSpace(line) {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
		return true
	}
	return false
}

// parsePatchOp reads the op at the start of lines and the lines it spans.
func parsePatchOp(lines []string) (patchOp, int, error) {
	header := strings.TrimSpace(lines[0])
	if p, ok := strings.CutPrefix(header, patchAdd); ok {
		n := 1
		for n < len(lines) && strings.HasPrefix(lines[n], "+") {
			n++
		}
		return patchOp{Kind: "add", Path: p}, n, nil
	}
	if p, ok := strings.CutPrefix(header, patchDelete); ok {
		return patchOp{Kind: "delete", Path: p}, 1, nil
	}
	p, ok := strings.CutPrefix(header, patchUpdate)
	if !ok {
		return patchOp{}, 0, fmt.Errorf("%w: a line is not an add, delete or update header", errPatch)
	}
	op, n := patchOp{Kind: "update", Path: p}, 1
	if n < len(lines) {
		if to, ok := strings.CutPrefix(lines[n], patchMoveTo); ok {
			op.MoveTo, n = to, n+1
		}
	}
	chunks := 0
	for n < len(lines) {
		switch {
		case strings.TrimSpace(lines[n]) == "":
			n++
			continue
		case strings.HasPrefix(lines[n], "***"):
			return op, n, patchChunks(chunks)
		}
		m, err := patchChunk(lines[n:], chunks == 0)
		if err != nil {
			return patchOp{}, 0, err
		}
		chunks++
		n += m
	}
	return op, n, patchChunks(chunks)
}

func patchChunks(n int) error {
	if n == 0 {
		return fmt.Errorf("%w: an update has no changes", errPatch)
	}
	return nil
}

// patchChunk reads one chunk of an update and the lines it spans.
func patchChunk(lines []string, first bool) (int, error) {
	n := 0
	for n < len(lines) && (lines[n] == patchContext || strings.HasPrefix(lines[n], patchContextS)) {
		n++
	}
	if n == 0 && !first {
		return 0, fmt.Errorf("%w: a chunk does not start with %q", errPatch, patchContext)
	}
	body := 0
	for ; n < len(lines); n++ {
		l := lines[n]
		if l == patchEOF {
			if body == 0 {
				break
			}
			return n + 1, nil
		}
		if l != "" && l[0] != ' ' && l[0] != '+' && l[0] != '-' {
			if body == 0 {
				break
			}
			return n, nil
		}
		body++
	}
	if body == 0 {
		return 0, fmt.Errorf("%w: a chunk has no lines", errPatch)
	}
	return n, nil
}

// patchPaths lists the files a Codex apply_patch envelope touches: those
// Codex's parser finds, each also without its leading blanks (which Codex
// keeps, as part of the name). When Codex would reject the patch, every
// line that trims to a header counts, so that a patch another version of
// the parser might accept is never read as touching nothing.
func patchPaths(patch string) []string {
	if !strings.Contains(patch, "*** ") {
		return nil
	}
	var out []string
	add := func(p string) {
		out = append(out, p)
		if t := strings.TrimSpace(p); t != p && t != "" {
			out = append(out, t)
		}
	}
	ops, err := parsePatch(patch)
	if err == nil {
		for _, op := range ops {
			add(op.Path)
			if op.MoveTo != "" {
				add(op.MoveTo)
			}
		}
		return out
	}
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, prefix := range []string{patchAdd, patchUpdate, patchDelete, patchMoveTo} {
			if p, ok := strings.CutPrefix(line, prefix); ok && p != "" {
				add(p)
			}
		}
	}
	return out
}
