package transport

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestWireGolden pins the exact bytes of every kind of response.
func TestWireGolden(t *testing.T) {
	deny := `{"effects":["deny"]}`
	tests := []struct{ name, in string }{
		{"no-effect", request(`"e1"`, validEvent, deny)},
		{"deny", request(`"e1"`, withTool("Danger"), deny)},
		{"integer-id", request(`42`, validEvent, deny)},
		{"parse-error", `{`},
		{"batch", `[]`},
		{"invalid-request", `{"jsonrpc":"2.0","id":"e1"}`},
		{"method-not-found", `{"jsonrpc":"2.0","id":"e1","method":"nope"}`},
		{"unsupported-version", strings.Replace(request(`"e1"`, validEvent, deny), `"draft"`, `"0.1"`, 1)},
		{"unsupported-event", request(`"e1"`, strings.Replace(validEvent, "tool.before", "session.start", 1), deny)},
		{"invalid-params", request(`"e1"`, validEvent, `{}`)},
		{"unavailable", request(`"e1"`, withTool("Busy"), deny)},
		{"internal-error", request(`"e1"`, withTool("Boom"), deny)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &Server{Interceptor: &fakeInterceptor{}}
			got := encode(t, srv.Handle(context.Background(), []byte(tt.in))) + "\n"
			path := filepath.Join("testdata", "golden", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./transport -run TestWireGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("wire output changed\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// FuzzHandle checks, for any input line, that the server never panics,
// never answers a message without an id, and otherwise answers with one
// line of JSON-RPC carrying a result xor an error.
func FuzzHandle(f *testing.F) {
	deny := `{"effects":["deny"]}`
	for _, seed := range []string{
		request(`"e1"`, validEvent, deny),
		request(`7`, withTool("Danger"), deny),
		request(`"e1"`, validEvent, `{}`),
		`{"jsonrpc":"2.0","method":"hooks/observe","params":{"protocolVersion":"draft","event":{}}}`,
		`[{"jsonrpc":"2.0"}]`, `{`, `"x"`, "\xff", `{"id":1e400}`, `{"id":null}`,
		request(`"e1"`, strings.Replace(validEvent, `"command":"ls"`, `"command":"ls","n":1e999999`, 1), deny),
		request(`12`, strings.Replace(validEvent, `"path"`, `"x":[-1E-999999],"path"`, 1), deny),
		request(`1e999999`, validEvent, deny),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fi := &fakeInterceptor{}
		srv := &Server{Interceptor: fi, Observer: &recordingObserver{}}
		resp := srv.Handle(context.Background(), data)
		for _, req := range fi.seen {
			// No number a policy cannot evaluate gets past validation.
			if p := numberOutOfRange(req.Event.Object, "event"); p != "" {
				t.Fatalf("%s reached the interceptor out of range: %q", p, data)
			}
		}
		msg, perr := Decode(data)
		if perr == nil {
			if _, hasID := msg["id"]; !hasID {
				if resp != nil {
					t.Fatalf("answered a notification: %q", data)
				}
				return
			}
		}
		if resp == nil {
			t.Fatalf("no answer to %q", data)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatalf("encoding answer to %q: %v", data, err)
		}
		if strings.ContainsAny(string(b), "\n\r") {
			t.Fatalf("answer holds a line break: %q", b)
		}
		var back map[string]json.RawMessage
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("answer is not a JSON object: %q", b)
		}
		_, hasResult := back["result"]
		_, hasError := back["error"]
		if hasResult == hasError || string(back["jsonrpc"]) != `"2.0"` {
			t.Fatalf("answer is not a JSON-RPC response: %s", b)
		}
	})
}

// TestAppendJSONMatchesEncodingJSON: the hand-written envelope encodes a
// response exactly as encoding/json encodes the wire structs.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	deny := Effect{Type: ahp.EffectDeny, Reason: `no <"rm"> & co` + "\n", Code: "com.example.rm",
		Extensions: map[string]any{"dev.x": map[string]any{"rules": []string{"a"}}}}
	for _, r := range []*Response{
		{ID: StringID("e1"), Result: NewResult()},
		{ID: IntID(-7), Result: NewResult(deny, deny)},
		{ID: StringID(`we"ird` + "\u2028"), Result: &InterceptResult{ProtocolVersion: "other", Effects: []Effect{}}},
		{ID: ID{}, Error: ParseError("message is not valid JSON")},
		{ID: StringID("e2"), Error: &Error{Code: ahp.CodeUnsupportedEvent, Message: "Unsupported event", Data: ReasonData{Supported: []string{"tool.before"}}}},
	} {
		var want []byte
		var err error
		if r.Error != nil {
			want, err = json.Marshal(wireError{JSONRPC: "2.0", ID: r.ID, Error: r.Error})
		} else {
			want, err = json.Marshal(wireResult{JSONRPC: "2.0", ID: r.ID, Result: r.Result})
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("AppendJSON = %s\nwant           prefix%s", got, want)
		}
	}
	if _, err := (&Response{ID: IntID(1)}).AppendJSON(nil); err == nil {
		t.Error("a response with neither result nor error encoded")
	}
}

// wireResult and wireError are the shapes of a response for
// encoding/json, the oracle of AppendJSON.
type wireResult struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      ID               `json:"id"`
	Result  *InterceptResult `json:"result"`
}

type wireError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      ID     `json:"id"`
	Error   *Error `json:"error"`
}
