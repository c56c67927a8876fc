package test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// Builders for the messages a harness sends. Messages are plain maps so
// that tables can break them field by field.

// legacyEvent is the early-draft shape: tool.callId, no call, path or
// origin (B-INT-5, PROTOCOL.md §11).
func legacyEvent(id, command string) map[string]any {
	return map[string]any{
		"id":      id,
		"source":  testkit.Source,
		"type":    "tool.before",
		"time":    testkit.Time,
		"session": map[string]any{"id": testkit.SessionID},
		"tool": map[string]any{
			"callId": "call-1",
			"name":   "Bash",
			"kind":   "shell",
			"input":  map[string]any{"command": command},
		},
	}
}

// interceptMsg wraps an event in a hooks/intercept request advertising
// effects. id is a string, an integer (int, int64, json.Number) or nil for
// a notification (the id member is then left out).
func interceptMsg(id any, event map[string]any, effects ...string) map[string]any {
	list := make([]any, 0, len(effects))
	for _, e := range effects {
		list = append(list, e)
	}
	msg := map[string]any{
		"jsonrpc": "2.0",
		"method":  "hooks/intercept",
		"params": map[string]any{
			"protocolVersion": "draft",
			"event":           event,
			"capabilities":    map[string]any{"effects": list},
		},
	}
	if id != nil {
		msg["id"] = id
	}
	return msg
}

// denyRequest is the usual request: string id equal to the event id,
// deny advertised.
func denyRequest(id, command string) map[string]any {
	return interceptMsg(id, testkit.ShellEvent(id, command), "deny")
}

func interceptLine(id, command string) string { return encode(denyRequest(id, command)) }

// observeMsg is a hooks/observe notification for an event.
func observeMsg(event map[string]any) map[string]any {
	return map[string]any{
		"jsonrpc": "2.0",
		"method":  "hooks/observe",
		"params":  map[string]any{"protocolVersion": "draft", "event": event},
	}
}

func sessionEndEvent(id string) map[string]any {
	return map[string]any{
		"id":      id,
		"source":  testkit.Source,
		"type":    "session.end",
		"time":    "2026-01-02T04:00:00Z",
		"session": map[string]any{"id": testkit.SessionID},
		"outcome": "completed",
		"reason":  "user exit",
	}
}

// encode marshals v on one line. It panics on values that cannot be
// marshalled: only test tables build them.
func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// with returns msg after setting the value at a dotted path
// ("params.event.tool.input"), creating objects on the way.
func with(msg map[string]any, path string, v any) map[string]any {
	keys := strings.Split(path, ".")
	m := msg
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
	return msg
}

// without returns msg after deleting the member at a dotted path.
func without(msg map[string]any, path string) map[string]any {
	keys := strings.Split(path, ".")
	m := msg
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return msg
		}
		m = next
	}
	delete(m, keys[len(keys)-1])
	return msg
}

// jsonText is the canonical JSON text of a Go value, used to compare ids:
// jsonText("a") == `"a"`, jsonText(json.Number("7")) == "7",
// jsonText(nil) == "null".
func jsonText(v any) string { return encode(v) }

// decodeJSON parses one JSON value keeping numbers exact.
func decodeJSON(tb testing.TB, s string) any {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decoding %q: %v", s, err)
	}
	return v
}
