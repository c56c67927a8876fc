package audit

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// TestFactsOutliveSessionEnd: a session.end, forged or real, does not
// forget a secret read; the facts go only when the session has been idle
// for the TTL, counted from its last call or end.
func TestFactsOutliveSessionEnd(t *testing.T) {
	const ttl = time.Hour
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	read := &Record{Time: t0, Kind: KindDecision, Source: "urn:h", SessionID: "s1", CallID: "c1", Decision: DecisionAllow}
	end := func(at time.Duration, session string) *Record {
		return &Record{Time: t0.Add(at), Kind: KindObservation, EventType: ahp.EventSessionEnd, Source: "urn:h", SessionID: session}
	}
	secret := Call{Family: "file_read", Reads: []string{"/repo/.env"}, Secret: true}
	for _, tc := range []struct {
		name    string
		ends    []*Record
		at      time.Duration
		session string
		want    bool // secrets_touched is still known
	}{
		{"no end, within the TTL", nil, 30 * time.Minute, "s1", true},
		{"an end, then a resumed call", []*Record{end(time.Minute, "s1")}, 30 * time.Minute, "s1", true},
		{"ends repeated", []*Record{end(time.Minute, "s1"), end(2*time.Minute, "s1"), end(3*time.Minute, "s1")}, 10 * time.Minute, "s1", true},
		{"kept a TTL from the end", []*Record{end(50*time.Minute, "s1")}, 100 * time.Minute, "s1", true},
		{"idle past the TTL", nil, ttl + time.Minute, "s1", false},
		{"idle past the TTL after the end", []*Record{end(time.Minute, "s1")}, ttl + 2*time.Minute, "s1", false},
		{"an end creates no session", []*Record{end(time.Minute, "s2")}, 2 * time.Minute, "s2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewReplayFacts(ttl)
			f.Apply(read, secret)
			for _, r := range tc.ends {
				f.Apply(r, Call{})
			}
			f.Tick(t0.Add(tc.at))
			v := f.Session(context.Background(), "urn:h", tc.session)
			got := false
			if v != nil {
				st, err := v.Find(ast.MustParseRef("x.secrets_touched")[1:])
				got = err == nil && st.Compare(ast.Boolean(true)) == 0
			}
			if got != tc.want {
				t.Errorf("secrets_touched known = %v, want %v (facts %v)", got, tc.want, v)
			}
		})
	}
}
