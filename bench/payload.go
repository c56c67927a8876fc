package bench

import (
	"fmt"
	"strings"
)

// sourceLine is the filler of large payloads: code with no secret shape
// and nothing any rule objects to.
const sourceLine = "export function add(a, b) { return a + b } // plain code, no secrets\n"

// LargeEvent returns a tool.before event whose tool input carries about n
// bytes of source text: kind "write" is a Write with the text as content,
// "heredoc" a Bash command that writes it through a here-document. The
// text begins with the request id (the template fills it in), so every
// request carries different content and nothing can be answered from a
// cache keyed on it.
func LargeEvent(kind string, n int) (map[string]any, error) {
	if n < 0 || n > 64<<20 {
		return nil, fmt.Errorf("bench: payload of %d bytes: want 0 to 64 MiB", n)
	}
	text := "// " + idMark + "\n" + strings.Repeat(sourceLine, n/len(sourceLine)+1)[:n]
	if !strings.HasSuffix(text, "\n") {
		text += "\n" // a here-document's delimiter must start a line
	}
	var tool map[string]any
	switch kind {
	case "write":
		tool = map[string]any{"name": "Write", "origin": "native",
			"input": map[string]any{"file_path": "/repo/src/generated.js", "content": text}}
	case "heredoc":
		tool = map[string]any{"name": "Bash", "kind": "shell", "origin": "native",
			"input": map[string]any{"command": "cat > src/generated.js <<'EOF'\n" + text + "EOF"}}
	default:
		return nil, fmt.Errorf("bench: payload kind %q: want write or heredoc", kind)
	}
	return map[string]any{
		"id": "bench", "source": "urn:ahp-opa:bench", "type": "tool.before",
		"time": "2026-01-02T03:04:05Z", "session": map[string]any{"id": "s1", "cwd": "/repo", "workspaceRoots": []any{"/repo"}},
		"call": map[string]any{"id": "c1"}, "path": "native", "tool": tool,
	}, nil
}

// ShellEvent returns a tool.before event for a shell command that every
// built-in and reference rule inspects and lets through, with the request
// id inside the command: every request carries a different command, as in
// a real session, so nothing can be answered from a cache keyed on it.
func ShellEvent() map[string]any {
	return map[string]any{
		"id": "bench", "source": "urn:ahp-opa:bench", "type": "tool.before",
		"time": "2026-01-02T03:04:05Z", "session": map[string]any{"id": "s1", "cwd": "/repo", "workspaceRoots": []any{"/repo"}},
		"call": map[string]any{"id": "c1"}, "path": "native",
		"tool": map[string]any{"name": "Bash", "kind": "shell", "origin": "native",
			"input": map[string]any{"command": "cd /repo && go test ./pkg/" + idMark + "/... 2>&1 | tail -20 && git status --short"}},
	}
}
