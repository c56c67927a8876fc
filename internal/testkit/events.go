package testkit

// The fixed values of the events the builders below make, for tests that
// assert them or build related events (a tool.after of the same session).
const (
	Source    = "urn:uuid:5b7de29e-0000-4000-8000-00000000a4e0"
	Time      = "2026-01-02T03:04:05Z"
	SessionID = "sess-1"
	Home      = "/home/dev"
	Workspace = Home + "/repo" // the session's cwd and only workspace root
)

// ToolEvent returns a tool.before event in the seed shape (source, time,
// call.id, path, a session working in Workspace) for the tool member
// given. The maps are fresh, so a table may change any member.
func ToolEvent(tool map[string]any) map[string]any {
	return map[string]any{
		"id":      "e1",
		"source":  Source,
		"type":    "tool.before",
		"time":    Time,
		"session": map[string]any{"id": SessionID, "cwd": Workspace, "workspaceRoots": []any{Workspace}},
		"call":    map[string]any{"id": "c1"},
		"path":    "native",
		"tool":    tool,
	}
}

// NativeTool is the tool member of a native call; a nil input is sent as
// an empty object.
func NativeTool(name string, input map[string]any) map[string]any {
	if input == nil {
		input = map[string]any{}
	}
	return map[string]any{"name": name, "origin": "native", "input": input}
}

// ShellEvent is the ToolEvent, with the id given, of a Bash command.
func ShellEvent(id, command string) map[string]any {
	tool := NativeTool("Bash", map[string]any{"command": command})
	tool["kind"] = "shell"
	ev := ToolEvent(tool)
	ev["id"] = id
	return ev
}
