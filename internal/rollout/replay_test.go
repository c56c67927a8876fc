package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/audit"
	"github.com/ahp-opa/ahp-opa/transport"
)

var update = flag.Bool("update", false, "rewrite golden files")

const candidate = `package ahp.tool.before.t
deny contains {"reason": "no rm", "code": "com.example.rm"} if input.tool.input.command == "rm x"
deny contains {"reason": "pushes need review", "code": "com.example.push"} if startswith(input.tool.input.command, "git push")
deny contains "evil tools are out" if input.tool.name == "Evil"
deny contains "never" if {
	input.tool.input.command == "explode"
	to_number("not a number") > 1
}
`

// knownChanges is a log whose every event has a known fate under candidate.
func knownChanges() []*audit.Record {
	return calls(
		call{id: "e1", command: "ls", decision: "allow"},
		call{id: "e2", command: "rm x", decision: "deny", reason: "no rm", codes: []string{"com.example.rm"}},
		call{id: "e3", command: "git push origin main", decision: "allow"},
		call{id: "e4", command: "curl https://example.com", decision: "deny", reason: "no curl", codes: []string{"com.example.curl"}},
		call{id: "e5", command: "rm x", decision: "deny", reason: "old wording", codes: []string{"com.example.rm"}},
		call{id: "e6", command: "explode", decision: "allow"},
		call{id: "e7", tool: "Evil", command: "x", decision: "error"},
		call{id: "e8", command: "ls", decision: "error"},
		call{id: "e9", command: "git push --force", decision: "deny", reason: "pushes need review", codes: []string{"com.example.push"}},
	)
}

func TestReplayKnownChanges(t *testing.T) {
	recs := knownChanges()
	// Observations are read (for session facts) but never re-decided.
	recs = append(recs, observation(audit.KindObservation, "tool.after", "s1", "call_e1", "executed", time.Hour))
	path := writeLog(t, recs)
	rep, err := replayFile(t, path, loadEngine(t, candidate, nil), ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ events, unchanged, denied, allowed, reason, nowErr, noErr, lines int }
	// e6's failing rule denies: on_rule_error is deny by default.
	want := counts{9, 3, 3, 1, 1, 0, 1, 10}
	got := counts{rep.Events, rep.Unchanged, rep.NewlyDenied, rep.NewlyAllowed, rep.ReasonChanged, rep.NowError, rep.NoLongerError, rep.Lines}
	if got != want {
		t.Errorf("counts:\n got %+v\nwant %+v", got, want)
	}
	if rep.Changes() != 6 {
		t.Errorf("Changes() = %d, want 6", rep.Changes())
	}
	wantRules := map[string]RuleCounts{
		"com.example.push":         {NewlyDenied: 1},
		"com.example.curl":         {NewlyAllowed: 1},
		"com.example.rm":           {ReasonChanged: 1},
		"ahp.tool.before.t":        {NewlyDenied: 1}, // a deny without a code is named by its package
		"dev.ahp-opa.policy-error": {NewlyDenied: 1}, // the failing rule, by on_rule_error
	}
	if len(rep.Rules) != len(wantRules) {
		t.Errorf("rules %v, want %v", rep.Rules, wantRules)
	}
	for k, w := range wantRules {
		if g := rep.Rules[k]; g == nil || *g != w {
			t.Errorf("rule %q: got %+v, want %+v", k, g, w)
		}
	}
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		if format == "text" {
			err = rep.WriteText(&buf)
		} else {
			err = rep.WriteJSON(&buf)
		}
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", "replay."+map[string]string{"text": "txt", "json": "json"}[format]), buf.String())
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestReplaySkipsBrokenLines: every kind of broken line is counted and
// skipped, and the records around it are still replayed.
func TestReplaySkipsBrokenLines(t *testing.T) {
	good := calls(call{id: "e1", command: "ls", decision: "allow"}, call{id: "e2", command: "rm x", decision: "allow"})
	long := decisionRecord(call{id: "long", command: strings.Repeat("x", 600), decision: "allow"})
	longLine, _ := json.Marshal(long)
	path := writeLog(t, good,
		"not json at all\n",
		"\n",
		"   \n",
		`{"time":"2026-03-02T09:00:00Z","kind":"decision","event_id":"cut"`+"\n", // cut by a crash mid-line
		"[1,2,3]\n",
		"\xff\xfe{}\n",                         // not UTF-8
		`{"kind":"decision"}`+"\n",             // no time: not a record ahp-opa writes
		`{"time":"2026-03-02T09:00:00Z"}`+"\n", // no kind
		`{"time":"2026-03-02T09:00:00Z","kind":"decision"} {"x":1}`+"\n", // two values on one line
		string(longLine)+"\n",
		`{"time":"2026-03-02T09:09:00Z","kind":"decision","event_type":"tool.be`, // truncated last line, no newline
	)
	rep, err := replayFile(t, path, loadEngine(t, candidate, nil), ReplayOptions{MaxLineBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 2 || rep.Unchanged != 1 || rep.NewlyDenied != 1 {
		t.Errorf("events %d unchanged %d newly denied %d, want 2, 1, 1", rep.Events, rep.Unchanged, rep.NewlyDenied)
	}
	want := Skipped{Malformed: 8, TooLong: 1}
	if rep.Skipped != want {
		t.Errorf("skipped %+v, want %+v", rep.Skipped, want)
	}
	if rep.Lines != 13 {
		t.Errorf("lines %d, want 13", rep.Lines)
	}
}

func TestReplayRefusesLogWithoutInputs(t *testing.T) {
	recs := knownChanges()
	for _, r := range recs {
		r.Input = nil
	}
	rep, err := replayFile(t, writeLog(t, recs), loadEngine(t, candidate, nil), ReplayOptions{})
	if !errors.Is(err, ErrNoInputs) {
		t.Fatalf("err = %v, want ErrNoInputs", err)
	}
	if !strings.Contains(err.Error(), "audit.include_input: true") || !strings.Contains(err.Error(), "AHP_OPA_AUDIT__INCLUDE_INPUT") {
		t.Errorf("the error does not say how to record inputs: %v", err)
	}
	if rep.Skipped.WithoutInput != len(recs) {
		t.Errorf("without_input %d, want %d", rep.Skipped.WithoutInput, len(recs))
	}
	// A log that starts recording inputs half way replays the rest.
	recs[0].Input = decisionRecord(call{id: "e1", command: "ls"}).Input
	rep, err = replayFile(t, writeLog(t, recs), loadEngine(t, candidate, nil), ReplayOptions{})
	if err != nil || rep.Events != 1 || rep.Skipped.WithoutInput != len(recs)-1 {
		t.Fatalf("partial inputs: events %d, without_input %d, err %v", rep.Events, rep.Skipped.WithoutInput, err)
	}
}

func TestReplayCapsChangedList(t *testing.T) {
	var cs []call
	for i := range 7 {
		cs = append(cs, call{id: "p" + string(rune('0'+i)), command: "git push", decision: "allow"})
	}
	rep, err := replayFile(t, writeLog(t, calls(cs...)), loadEngine(t, candidate, nil), ReplayOptions{MaxChanged: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changed) != 3 || rep.ChangedNotListed != 4 || rep.NewlyDenied != 7 {
		t.Errorf("listed %d, not listed %d, newly denied %d; want 3, 4, 7", len(rep.Changed), rep.ChangedNotListed, rep.NewlyDenied)
	}
	if rep.Changed[0].ID != "p0" || rep.Changed[2].ID != "p2" {
		t.Errorf("the first changes in log order are listed, got %v…%v", rep.Changed[0].ID, rep.Changed[2].ID)
	}
}

// TestReplayRebuildsSessionFacts: a rule that reads input.ahp.session sees
// the facts the log itself implies, aged by the log's clock.
func TestReplayRebuildsSessionFacts(t *testing.T) {
	const policy = `package ahp.tool.before.s
deny contains {"reason": "too many denies in this session", "code": "com.example.session"} if input.ahp.session.denied >= 2
`
	recs := calls(
		call{id: "a1", command: "x", decision: "deny", reason: "old", codes: []string{"com.example.old"}},
		call{id: "a2", command: "x", decision: "deny", reason: "old", codes: []string{"com.example.old"}},
		call{id: "a3", command: "y", decision: "allow"}, // two denies before it: now denied
		call{id: "b1", session: "s2", command: "x", decision: "deny", reason: "old", codes: []string{"com.example.old"}},
		call{id: "b2", session: "s2", command: "x", decision: "deny", reason: "old", codes: []string{"com.example.old"}},
		// Two days later: s2's facts expired (session_ttl 24h by the log's clock).
		call{id: "b3", session: "s2", command: "y", decision: "allow", at: 48 * time.Hour},
	)
	end := observation(audit.KindObservation, "session.end", "s1", "", "", 5*time.Minute)
	recs = append(recs[:3], append([]*audit.Record{end}, recs[3:]...)...)
	// After session.end, s1 starts afresh.
	recs = append(recs, decisionRecord(call{id: "a4", command: "y", decision: "allow", at: 49 * time.Hour}))

	facts := audit.NewReplayFacts(24 * time.Hour)
	rep, err := replayFile(t, writeLog(t, recs), loadEngine(t, policy, facts), ReplayOptions{Facts: facts})
	if err != nil {
		t.Fatal(err)
	}
	var newlyDenied []string
	for _, c := range rep.Changed {
		if c.Change == NewlyDenied {
			newlyDenied = append(newlyDenied, c.ID)
		}
	}
	if strings.Join(newlyDenied, ",") != "a3" {
		t.Errorf("newly denied %v, want only a3 (b3's session expired, a4's ended)", newlyDenied)
	}
	if rep.NewlyAllowed != 4 || rep.Unchanged != 2 {
		t.Errorf("newly allowed %d, unchanged %d; want 4 and 2", rep.NewlyAllowed, rep.Unchanged)
	}
}

func TestCompare(t *testing.T) {
	allow := Outcome{Decision: audit.DecisionAllow}
	deny := func(reason string, codes ...string) Outcome {
		return Outcome{Decision: audit.DecisionDeny, Reason: reason, Codes: codes}
	}
	fail := Outcome{Decision: audit.DecisionError}
	tests := []struct {
		name          string
		before, after Outcome
		want          Change
	}{
		{"allow stays", allow, allow, Unchanged},
		{"deny stays", deny("r", "a"), deny("r", "a"), Unchanged},
		{"error stays", fail, fail, Unchanged},
		{"allow to deny", allow, deny("r"), NewlyDenied},
		{"error to deny", fail, deny("r"), NewlyDenied},
		{"deny to allow", deny("r"), allow, NewlyAllowed},
		{"other reason", deny("r", "a"), deny("s", "a"), ReasonChanged},
		{"other code", deny("r", "a"), deny("r", "b"), ReasonChanged},
		{"one more code", deny("r", "a"), deny("r", "a", "b"), ReasonChanged},
		{"allow to error", allow, fail, NowError},
		{"deny to error", deny("r"), fail, NowError},
		{"error to allow", fail, allow, NoLongerError},
	}
	for _, tt := range tests {
		if got := Compare(tt.before, tt.after); got != tt.want {
			t.Errorf("%s: Compare = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// allowAll judges every request "no objection" without a policy.
type allowAll struct{}

func (allowAll) Judge(context.Context, *transport.InterceptRequest) engine.Verdict {
	return engine.Verdict{Result: transport.NewResult()}
}

// FuzzReplay: whatever the log holds, replay neither panics nor miscounts.
func FuzzReplay(f *testing.F) {
	var seed bytes.Buffer
	for _, r := range knownChanges()[:3] {
		b, _ := json.Marshal(r)
		seed.Write(b)
		seed.WriteByte('\n')
	}
	f.Add(seed.Bytes())
	f.Add([]byte("{\"time\":\"2026-03-02T09:00:00Z\",\"kind\":\"decision\",\"event_type\":\"tool.before\",\"input\":{}}\n{"))
	f.Add([]byte("\n\n\xff"))
	hostile, _ := json.Marshal(decisionRecord(call{id: "e\x1b[2J", tool: "B\u202e", command: "a\u009b\x07", decision: "deny", codes: []string{"c\t"}}))
	f.Add(hostile)
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Replay(context.Background(), bytes.NewReader(data), allowAll{}, ReplayOptions{MaxLineBytes: 256, MaxRules: 2})
		if err != nil && !errors.Is(err, ErrNoInputs) {
			t.Fatal(err)
		}
		if rep.Unchanged+rep.Changes() != rep.Events {
			t.Fatalf("unchanged %d + changes %d != events %d", rep.Unchanged, rep.Changes(), rep.Events)
		}
		if rep.Events+rep.Skipped.Malformed+rep.Skipped.TooLong+rep.Skipped.WithoutInput > rep.Lines {
			t.Fatalf("more outcomes than lines: %+v", rep)
		}
		if len(rep.Rules) > 2 {
			t.Fatalf("%d rules listed, MaxRules is 2", len(rep.Rules))
		}
		// Both reports are safe to print: no raw control, bidi or C1
		// character, and the JSON one reads back as JSON.
		var text, js bytes.Buffer
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s report is not UTF-8: %q", name, out)
			}
			for _, r := range out {
				if hostileControl(r) {
					t.Fatalf("%s report holds %U raw: %q", name, r, out)
				}
			}
		}
		if !json.Valid(js.Bytes()) {
			t.Fatalf("JSON report is not JSON: %s", js.String())
		}
	})
}
