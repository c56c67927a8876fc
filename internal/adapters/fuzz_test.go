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
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// fuzzDecoder checks one agent's payload decoder: it never panics, a
// payload it accepts maps to a known type with an object that encodes, and
// Run answers any bytes with one JSON object at exit 0.
func fuzzDecoder(f *testing.F, agent string) {
	f.Add([]byte(preToolPayload[agent]))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"tool_name":1,"toolArgs":"{\"command\":[1]}","tool_input":"x","mcp_context":[]}`))
	f.Add([]byte(`{"hook_event_name":"beforeMCPExecution","tool_name":"t","tool_input":"{","url":"http://[::1"}`))
	// Each agent's shell tools with decoy fields beside the executed ones.
	for _, tool := range []string{"Bash", "local_shell", "exec_command", "shell", "run_shell_command", "Shell", "bash"} {
		for _, input := range []string{
			`{"command":"rm -rf ~","action":{"command":["true"],"workdir":"/"},"cmd":"ls","workdir":"/tmp","dir_path":"sub","cwd":"/etc"}`,
			`{"cmd":"cat id_rsa","command":["true"],"action":{"command":["ls"],"working_directory":"/home/dev/.ssh"},"workdir":".ssh"}`,
		} {
			f.Add(mustPayload(agent, tool, input))
		}
	}
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
			case ahp.EventToolBefore, ahp.EventToolAfter, ahp.EventSessionStart, ahp.EventSessionEnd:
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
		if err == nil && ev.Type == ahp.EventToolBefore {
			onlyExecutedFields(t, agent, payload, ev)
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

// mustPayload is payloadFor for a seed, outside a test.
func mustPayload(agent, tool, input string) []byte {
	var in map[string]any
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		panic(err)
	}
	b, err := json.Marshal(preToolMap(agent, tool, in))
	if err != nil {
		panic(err)
	}
	return b
}

// onlyExecutedFields checks that the command and directory a pre-tool
// event leads the analysis to come only from the fields the agent runs:
// the same payload with every other field of the tool input removed is
// analysed alike. A native shell tool whose agent names no such field is
// read as any tool of unknown shape, which this does not cover.
func onlyExecutedFields(t *testing.T, agent string, payload []byte, ev *adapters.Event) {
	t.Helper()
	tool, _ := ev.Object["tool"].(map[string]any)
	name, _ := tool["name"].(string)
	shape, own := adapters.ShellOf(agent, name)
	if !own || tool["kind"] != "shell" {
		return
	}
	var p map[string]any
	if json.Unmarshal(payload, &p) != nil {
		return
	}
	key := ""
	for _, k := range []string{"tool_input", "toolArgs"} {
		if _, ok := p[k].(map[string]any); ok {
			key = k
		}
	}
	if key == "" {
		return // built by the mapping itself (Cursor's beforeShellExecution), or a JSON string
	}
	input := p[key].(map[string]any)
	kept := map[string]any{}
	for _, f := range append(append([]adapters.Field{}, shape.Command...), shape.Dir...) {
		if v := f.In(input); v != nil {
			put(kept, f, v)
		}
	}
	p[key] = kept
	stripped, err := adapters.Parse(agent, mustJSON(t, p), time.Unix(0, 0))
	if err != nil {
		t.Fatalf("the payload without its unread fields does not parse: %v", err)
	}
	want, got := enrich(t, stripped), enrich(t, ev)
	for _, part := range []string{"shell", "workspace"} {
		if a, b := string(mustJSON(t, got[part])), string(mustJSON(t, want[part])); a != b {
			t.Fatalf("input.ahp.%s depends on a field %s does not run:\n with    %s\n without %s", part, agent, a, b)
		}
	}
}

// put sets the value at f in m, making the objects on the way.
func put(m map[string]any, f adapters.Field, v any) {
	for _, k := range f[:len(f)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[f[len(f)-1]] = v
}
