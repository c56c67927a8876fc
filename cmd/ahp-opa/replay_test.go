package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected replay output of examples/rollout")

// runReplay runs the replay command in process and returns its stdout and
// exit status.
func runReplay(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	cmd := replayCommand()
	cmd.SilenceErrors, cmd.SilenceUsage = true, true // as under the root command
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	var exit exitError
	switch {
	case err == nil:
		return out.String(), 0, nil
	case errors.As(err, &exit):
		return out.String(), exit.code, nil
	}
	return out.String(), 1, err
}

// TestRolloutExample replays the example's audit log: against the policy
// that recorded it nothing changes (exit 0); against the candidate the
// changes are exactly the expected output (exit 3).
func TestRolloutExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "rollout")
	log := filepath.Join(dir, "audit.jsonl")
	tests := []struct {
		name, policy, format, golden string
		exit                         int
	}{
		{"live policy", "live", "text", "", 0},
		{"candidate text", "candidate", "text", "replay.txt", 3},
		{"candidate json", "candidate", "json", "replay.json", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code, err := runReplay(t, "--audit-log", log, "--policy", filepath.Join(dir, tt.policy), "--format", tt.format)
			if err != nil {
				t.Fatal(err)
			}
			if code != tt.exit {
				t.Fatalf("exit status %d, want %d; output:\n%s", code, tt.exit, out)
			}
			if tt.golden == "" {
				if !strings.Contains(out, "unchanged  10") {
					t.Errorf("want 10 unchanged decisions, got:\n%s", out)
				}
				return
			}
			golden := filepath.Join(dir, tt.golden)
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("replay output differs from %s:\n--- got\n%s--- want\n%s", golden, out, want)
			}
		})
	}
}

func TestReplayCommandErrors(t *testing.T) {
	dir := t.TempDir()
	noInput := filepath.Join(dir, "no-input.jsonl")
	rec := `{"time":"2026-03-02T09:00:00Z","kind":"decision","event_id":"e1","event_type":"tool.before","decision":"allow"}` + "\n"
	if err := os.WriteFile(noInput, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"log without inputs", []string{"--audit-log", noInput}, "audit.include_input: true"},
		{"no log named", nil, "--audit-log FILE"},
		{"missing log", []string{"--audit-log", filepath.Join(dir, "absent.jsonl")}, "no such file"},
		{"bad format", []string{"--audit-log", noInput, "--format", "yaml"}, "want text or json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, code, err := runReplay(t, tt.args...)
			if code != 1 || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d, err %v; want exit 1 and an error containing %q", code, err, tt.want)
			}
		})
	}
}

// TestReplayMaxRules: --max-rules bounds the rule table; the changes of
// the rules it leaves out are counted, in the text and the JSON report.
func TestReplayMaxRules(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "rollout")
	args := []string{"--audit-log", filepath.Join(dir, "audit.jsonl"), "--policy", filepath.Join(dir, "candidate"), "--max-rules", "1"}
	out, code, err := runReplay(t, args...)
	if err != nil || code != exitChanged {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	// Rules are listed first come first: evt_2's publish, then the others
	// (kubectl-prod 2 changes, push-main 2) are counted.
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"now an error com.example.team.publish 0 0 1 0 (4 changes by rules not listed) 2 1 1 0 id time",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("text report lacks the rule table %q:\n%s", want, out)
		}
	}
	out, _, err = runReplay(t, append(args, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Rules          map[string]json.RawMessage `json:"rules"`
		RulesNotListed map[string]int             `json:"rules_not_listed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"newly_denied": 2, "newly_allowed": 1, "reason_changed": 1}
	if len(rep.Rules) != 1 || fmt.Sprint(rep.RulesNotListed) != fmt.Sprint(want) {
		t.Errorf("rules %v, rules_not_listed %v; want 1 rule and %v", rep.Rules, rep.RulesNotListed, want)
	}
}
