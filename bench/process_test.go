package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestMain lets the test binary play the processes under test: with
// BENCH_FAKE set it answers on stdin/stdout like ahp-opa's stdio binding
// ("ahp") or like `opa eval -I` ("opa-eval"), then exits.
func TestMain(m *testing.M) {
	switch os.Getenv("BENCH_FAKE") {
	case "":
		os.Exit(m.Run())
	case "ahp":
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var req struct {
				ID     string
				Params struct{ Event map[string]any }
			}
			if err := json.Unmarshal(sc.Bytes(), &req); err != nil || req.Params.Event["id"] != req.ID {
				fmt.Println(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`)
				continue
			}
			fmt.Printf(`{"jsonrpc":"2.0","id":%q,"result":{"effects":[{"type":"deny","reason":"no"}]}}`+"\n", req.ID)
		}
	case "opa-eval":
		var input map[string]any
		if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil || !strings.HasPrefix(input["id"].(string), "bench-") {
			os.Exit(2)
		}
		fmt.Println(`{"result":[{"expressions":[{"value":[{"code":"x"}],"text":"data.x.deny"}]}]}`)
	}
	os.Exit(0)
}

func TestRunProcesses(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		target Target
		fake   string
		long   bool // a process per request: about 20 starts of this test binary
	}{
		{"stdio", Target{Protocol: AHP, Transport: Stdio, Command: []string{self}}, "ahp", false},
		{"per_event", Target{Protocol: AHP, Transport: PerEvent, Command: []string{self}}, "ahp", true},
		{"opa eval", Target{Protocol: OPA, Transport: PerEvent, Command: []string{self}}, "opa-eval", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.long {
				testkit.RequireLong(t)
			}
			t.Setenv("BENCH_FAKE", tt.fake)
			r, err := Run(context.Background(), tt.target, Options{Conns: 2, Requests: 6, Event: testEvent, Deny: true})
			if err != nil || r.Errors != 0 || r.Requests != 6 {
				t.Fatalf("%+v %v (first error %v)", r, err, r.FirstErr)
			}
			// A warm-up too short for one answer is no failure.
			if _, err := Run(context.Background(), tt.target, Options{Conns: 1, Requests: 1, Warmup: time.Nanosecond, Event: testEvent, Deny: true}); err != nil {
				t.Errorf("with a warm-up shorter than an answer: %v", err)
			}
			// A wrong decision is counted, not taken for a fast answer.
			r, err = Run(context.Background(), tt.target, Options{Conns: 1, Requests: 2, Event: testEvent, Deny: false})
			if err != nil || r.Errors != 2 {
				t.Errorf("wrong decisions: %+v %v", r, err)
			}
		})
	}
}

func TestRunRefusesOPAOverStdio(t *testing.T) {
	_, err := Run(context.Background(), Target{Protocol: OPA, Transport: Stdio, Command: []string{"opa"}},
		Options{Conns: 1, Requests: 1, Event: testEvent})
	if err == nil {
		t.Error("OPA over stdio accepted")
	}
}
