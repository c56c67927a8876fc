package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestReplayBoundsRuleTable: a log with more distinct rule codes than
// MaxRules lists the first MaxRules rules and counts the changes of the
// others, by kind, in the text and the JSON report; an overlong code is
// cut.
func TestReplayBoundsRuleTable(t *testing.T) {
	long := strings.Repeat("r", 10_000)
	tests := []struct {
		name     string
		codes    []string // one recorded deny each, all now allowed
		maxRules int
		wantKeys []string
		wantNot  RuleCounts
		wantText string // the line that counts what the bound left out
	}{
		{
			name: "under the bound", codes: []string{"a", "b", "a"}, maxRules: 3,
			wantKeys: []string{"a", "b"},
		},
		{
			name: "over the bound", codes: []string{"a", "b", "c", "a", "d", "c"}, maxRules: 2,
			wantKeys: []string{"a", "b"}, wantNot: RuleCounts{NewlyAllowed: 3},
			wantText: "(3 changes by rules not listed)  0  3  0  0",
		},
		{
			name: "an overlong code is cut", codes: []string{long}, maxRules: 2,
			wantKeys: []string{strings.Repeat("r", maxRuleBytes) + "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			for i, c := range tt.codes {
				rec := decisionRecord(call{id: fmt.Sprint("e", i), command: "ls", decision: "deny", reason: "r", codes: []string{c}})
				line, _ := json.Marshal(rec)
				log.Write(line)
				log.WriteByte('\n')
			}
			rep, err := Replay(context.Background(), &log, allowAll{}, ReplayOptions{MaxRules: tt.maxRules})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.sortedRules(); !equalFields(got, tt.wantKeys) {
				t.Errorf("rules %q, want %q", got, tt.wantKeys)
			}
			if rep.RulesNotListed != tt.wantNot {
				t.Errorf("rules_not_listed %+v, want %+v", rep.RulesNotListed, tt.wantNot)
			}
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back struct {
				RulesNotListed RuleCounts `json:"rules_not_listed"`
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.RulesNotListed != tt.wantNot {
				t.Errorf("JSON rules_not_listed %+v (%v), want %+v", back.RulesNotListed, err, tt.wantNot)
			}
			hasLine := strings.Contains(strings.Join(strings.Fields(text.String()), " "), strings.Join(strings.Fields(tt.wantText), " "))
			if tt.wantText != "" && !hasLine {
				t.Errorf("text report lacks %q:\n%s", tt.wantText, text.String())
			}
			if tt.wantText == "" && strings.Contains(text.String(), "not listed") {
				t.Errorf("text report mentions rules not listed:\n%s", text.String())
			}
		})
	}
}
