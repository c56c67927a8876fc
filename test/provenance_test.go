package test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestProvenance drives the binary as a harness inside a checkout whose
// wrapper script runs decoded text (eval of base64): committed, the
// project's idiom, it passes; once the session has written the file, the
// same text is the agent's and is judged as typed (issue 28). The session
// facts that tell the two apart come from the session's own tool calls.
func TestProvenance(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	wrapper := "#!/bin/sh\nopts=$(echo LVhteDUxMm0K | base64 -d)\neval \"set -- $opts\" '\"$@\"'\nexec java \"$@\"\n"
	if err := os.WriteFile(filepath.Join(ws, "toolw"), []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	event := func(id, session string, tool map[string]any) map[string]any {
		ev := testkit.ShellEvent(id, "")
		ev["session"] = map[string]any{"id": session, "cwd": ws, "workspaceRoots": []any{ws}}
		ev["tool"] = tool
		ev["call"] = map[string]any{"id": "call-" + id}
		return ev
	}
	run := map[string]any{"name": "Bash", "kind": "shell", "origin": "native", "input": map[string]any{"command": "./toolw build"}}
	write := map[string]any{"name": "Write", "kind": "edit", "origin": "native",
		"input": map[string]any{"file_path": filepath.Join(ws, "toolw"), "content": wrapper}}

	p := startServe(t)
	// Committed: judged by what it does (runs java), not how.
	wantNoObjection(t, p.roundTrip(t, encode(interceptMsg("e1", event("e1", "s-committed", run), "deny"))))
	// The session writes the wrapper, then runs it: its text is the agent's.
	wantNoObjection(t, p.roundTrip(t, encode(interceptMsg("e2", event("e2", "s-wrote", write), "deny"))))
	if d := wantDeny(t, p.roundTrip(t, encode(interceptMsg("e3", event("e3", "s-wrote", run), "deny")))); d != nil && d["code"] != "dev.ahp-opa.exec.decode-and-execute" {
		t.Errorf("deny code = %v, want dev.ahp-opa.exec.decode-and-execute", d["code"])
	}
	// Another session did not write it.
	wantNoObjection(t, p.roundTrip(t, encode(interceptMsg("e4", event("e4", "s-other", run), "deny"))))
	p.expectCleanExit(t)
}
