package transport

import (
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

func mustObject(t testing.TB, src string) ast.Object {
	t.Helper()
	v, _, err := parseJSON([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return v.(ast.Object)
}

// TestEventFields: every field the layers after the transport read is
// parsed once into Event, from both event shapes and the observed types
// (PROTOCOL.md §2, §4).
func TestEventFields(t *testing.T) {
	tests := []struct {
		name   string
		event  string
		strict bool
		want   Event
	}{{
		name:   "tool.before, current shape",
		strict: true,
		event: `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","path":"native",
			"session":{"id":"s1","cwd":"/repo","workspaceRoots":["/repo",7,"/lib"]},"call":{"id":"c1"},
			"tool":{"name":"mcp__gh__list","kind":"mcp","origin":"mcp","input":{},"mcp":{"server":{"id":"gh-id"},"toolName":"list"}}}`,
		want: Event{ID: "e1", Source: "urn:x", Type: ahp.EventToolBefore, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CallID: "c1",
			Session: Session{ID: "s1", Cwd: "/repo", WorkspaceRoots: []string{"/repo", "/lib"}},
			Tool:    Tool{Name: "mcp__gh__list", Kind: "mcp", Origin: ahp.OriginMCP, MCP: MCP{Server: "gh-id", ToolName: "list"}}},
	}, {
		name:   "tool.before, legacy shape (B-INT-5)",
		strict: true,
		event:  `{"id":"e1","source":"urn:x","type":"tool.before","time":"2026-01-02T03:04:05Z","tool":{"callId":"c7","name":"Bash","input":{}}}`,
		want:   Event{ID: "e1", Source: "urn:x", Type: ahp.EventToolBefore, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CallID: "c7", Tool: Tool{Name: "Bash"}},
	}, {
		name: "tool.after",
		event: `{"id":"e2","source":"urn:x","type":"tool.after","time":"2026-01-02T03:04:05Z","session":{"id":"s1"},"call":{"id":"c1"},
			"tool":{"name":"Bash","input":{}},"outcome":"error","execution":{"status":"skipped","reason":"policy"},"error":{"class":"denied","message":"no"}}`,
		want: Event{ID: "e2", Source: "urn:x", Type: ahp.EventToolAfter, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CallID: "c1",
			Session: Session{ID: "s1"}, Tool: Tool{Name: "Bash"}, Outcome: "error",
			Execution: Execution{Status: "skipped", Reason: "policy"}, Failure: Failure{Class: "denied", Message: "no"}},
	}, {
		name:  "session.end",
		event: `{"id":"e3","source":"urn:x","type":"session.end","time":"2026-01-02T04:00:00Z","session":{"id":"s1"},"outcome":"completed","reason":"user exit"}`,
		want: Event{ID: "e3", Source: "urn:x", Type: ahp.EventSessionEnd, Time: time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC),
			Session: Session{ID: "s1"}, Outcome: "completed", Reason: "user exit"},
	}, {
		name:  "observed, every field of the wrong type",
		event: `{"id":1,"source":[],"type":{},"time":"yesterday","session":"s","tool":{"name":2,"origin":"plugin","mcp":[]},"call":{"id":3},"outcome":4,"execution":"x","error":5,"reason":6}`,
		want:  Event{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := mustObject(t, tt.event)
			var got Event
			if tt.strict {
				var err error
				if got, err = ParseToolEvent(obj); err != nil {
					t.Fatal(err)
				}
			} else {
				got = EventOf(obj)
			}
			if got.Object == nil || got.Object.Compare(obj) != 0 {
				t.Errorf("Object is not the event as decoded")
			}
			got.Object, got.Tool.Input = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestParseToolEventReasons: ParseToolEvent refuses what hooks/intercept
// refuses, with -32602 and a reason naming the field (B-INT-5).
func TestParseToolEventReasons(t *testing.T) {
	tests := []struct{ event, reason string }{
		{`{}`, "event.id must be a non-empty string"},
		{`{"id":"e","source":"urn:x","time":"2026-01-02T03:04:05Z","tool":{"name":"Bash","input":{}}}`, "event.call.id (or the legacy event.tool.callId) is required"},
		{`{"id":"e","source":"urn:x","time":"2026-01-02T03:04:05Z","call":{"id":"c"},"tool":{"name":"Bash","input":{"n":1e999999}}}`, "event.tool.input.n is a number out of the range a policy can evaluate"},
		{`{"id":"e","source":"urn:x","time":"2026-01-02T03:04:05Z","call":{"id":"c"},"session":{},"tool":{"name":"Bash","input":{}}}`, "event.session.id must be a non-empty string"},
	}
	for _, tt := range tests {
		_, err := ParseToolEvent(mustObject(t, tt.event))
		rpc, ok := err.(*Error)
		if !ok || rpc.Code != ahp.CodeInvalidParams || rpc.Data.(ReasonData).Reason != tt.reason {
			t.Errorf("%s: got %v, want -32602 %q", tt.event, err, tt.reason)
		}
	}
}

// FuzzEventOf: reading any object as an event never panics, and a valid
// tool event reads the same strictly and leniently (the observation
// fields aside, which a strict parse leaves alone).
func FuzzEventOf(f *testing.F) {
	f.Add([]byte(validEvent))
	f.Add([]byte(`{"id":"e3","type":"session.end","session":{"id":"s1","workspaceRoots":["/a",1]},"outcome":"completed","reason":"x"}`))
	f.Add([]byte(`{"tool":{"mcp":{"server":{"name":"a"},"toolName":"b"}},"execution":{"status":"executed"},"error":{"class":"c"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _, err := parseJSON(data)
		obj, ok := v.(ast.Object)
		if err != nil || !ok {
			return
		}
		lenient := EventOf(obj)
		strict, perr := ParseToolEvent(obj)
		if perr != nil {
			return
		}
		lenient.Outcome, lenient.Reason, lenient.Execution, lenient.Failure = "", "", Execution{}, Failure{}
		if !reflect.DeepEqual(lenient, strict) {
			t.Errorf("lenient %+v\nstrict  %+v", lenient, strict)
		}
	})
}
