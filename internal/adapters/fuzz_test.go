package adapters_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// fuzzDecoder checks one agent's payload decoder: it never panics, a
// payload it accepts maps to a known type with an object that encodes, and
// Run answers any bytes with one JSON object at exit 0.
func fuzzDecoder(f *testing.F, agent string) {
	f.Add([]byte(preToolPayload[agent]))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"tool_name":1,"toolArgs":"{\"command\":[1]}","tool_input":"x","mcp_context":[]}`))
	f.Add([]byte(`{"hook_event_name":"beforeMCPExecution","tool_name":"t","tool_input":"{","url":"http://[::1"}`))
	if dir, err := testkit.LocateAdapters(); err == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "fixtures", "*", "*.json"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, err := adapters.Parse(agent, payload, time.Unix(0, 0))
		if err == nil {
			switch ev.Type {
			case adapters.TypeToolBefore, adapters.TypeToolAfter, adapters.TypeSessionStart, adapters.TypeSessionEnd:
				if _, err := json.Marshal(ev.Object); err != nil {
					t.Fatalf("event does not encode: %v", err)
				}
				if _, ok := ev.Object["id"].(string); !ok {
					t.Fatal("event has no id")
				}
			case adapters.TypeNone:
			default:
				t.Fatalf("type %q", ev.Type)
			}
		}
		ans := adapters.Run(context.Background(), allow, agent, payload, adapters.Options{})
		var m map[string]any
		if ans.Exit != 0 || json.Unmarshal(ans.Stdout, &m) != nil {
			t.Fatalf("answer %+v", ans)
		}
	})
}

func FuzzClaudeCode(f *testing.F) { fuzzDecoder(f, adapters.ClaudeCode) }
func FuzzCodex(f *testing.F)      { fuzzDecoder(f, adapters.Codex) }
func FuzzGeminiCLI(f *testing.F)  { fuzzDecoder(f, adapters.GeminiCLI) }
func FuzzCursor(f *testing.F)     { fuzzDecoder(f, adapters.Cursor) }
func FuzzCopilot(f *testing.F)    { fuzzDecoder(f, adapters.Copilot) }
