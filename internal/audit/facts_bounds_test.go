package audit

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

// TestFactsBounds: every table in the session facts is bounded, and what
// a bound pushes out is counted.
func TestFactsBounds(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name         string
		feed         func(f *Facts)
		check        func(t *testing.T, f *Facts)
		sessions     uint64
		itemsAtLeast uint64
		itemsAtMost  uint64
	}{
		{
			name: "sessions past maxSessions",
			feed: func(f *Facts) {
				for i := range maxSessions + 5 {
					f.observeDecision("urn:h", fmt.Sprint("s", i), "", DecisionAllow, Call{Family: "shell"}, t0.Add(time.Duration(i)))
				}
			},
			check: func(t *testing.T, f *Facts) {
				if n := f.sessions.len(); n != maxSessions {
					t.Errorf("sessions kept = %d, want %d", n, maxSessions)
				}
			},
			sessions: 5,
		},
		{
			name: "files read past maxFactItems",
			feed: func(f *Facts) {
				for i := range maxFactItems + 3 {
					f.observeDecision("urn:h", "s", fmt.Sprint("c", i), DecisionAllow,
						Call{Family: "file_read", Reads: []string{fmt.Sprint("/f", i)}}, t0)
				}
			},
			check: func(t *testing.T, f *Facts) {
				if n := len(f.sessions.items[sessionKey{"urn:h", "s"}].v.reads); n != maxFactItems {
					t.Errorf("files_read kept = %d, want %d", n, maxFactItems)
				}
			},
			itemsAtLeast: 6, itemsAtMost: 6, // 3 reads and 3 recent calls
		},
		{
			name: "open-ended families",
			feed: func(f *Facts) {
				for i := range maxFamilies + 10 {
					f.observeDecision("urn:h", "s", fmt.Sprint("c", i), DecisionAllow, Call{Family: fmt.Sprint("fam", i)}, t0)
				}
			},
			check: func(t *testing.T, f *Facts) {
				s := f.sessions.items[sessionKey{"urn:h", "s"}].v
				if len(s.calls) != maxFamilies+1 || s.calls["other"] != 10 {
					t.Errorf("families = %d, other = %d; want %d and 10", len(s.calls), s.calls["other"], maxFamilies+1)
				}
			},
			itemsAtLeast: 10,
		},
		{
			name: "a path longer than maxFactItemBytes",
			feed: func(f *Facts) {
				f.observeDecision("urn:h", "s", "c", DecisionAllow,
					Call{Family: "file_read", Reads: []string{"/" + strings.Repeat("é", maxFactItemBytes)}, Secret: true}, t0)
			},
			check: func(t *testing.T, f *Facts) {
				s := f.sessions.items[sessionKey{"urn:h", "s"}].v
				got := string(s.reads[0].Value.(ast.String))
				if len(got) > maxFactItemBytes || !strings.HasSuffix(got, "…") || len(s.secrets) != 1 {
					t.Errorf("kept %d bytes (suffix %q), secrets %d; want at most %d ending in …, and the secret kept",
						len(got), got[len(got)-4:], len(s.secrets), maxFactItemBytes)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFacts(time.Hour)
			c.feed(f)
			c.check(t, f)
			st := f.Stats()
			if st.SessionsEvicted != c.sessions || st.ItemsEvicted < c.itemsAtLeast ||
				c.itemsAtMost > 0 && st.ItemsEvicted > c.itemsAtMost {
				t.Errorf("stats %+v, want %d sessions and %d..%d items evicted", st, c.sessions, c.itemsAtLeast, c.itemsAtMost)
			}
		})
	}
}

// TestFactsEvictionsLogged: the sweep says what the bounds pushed out,
// once per period.
func TestFactsEvictionsLogged(t *testing.T) {
	var logs bytes.Buffer
	a, err := New(Config{}, nil, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	t0 := time.Now()
	for i := range maxFactItems + 2 {
		a.facts.observeDecision("urn:h", "s", fmt.Sprint("c", i), DecisionAllow, Call{Family: "shell"}, t0)
	}
	a.sweepAt(t, t0)
	a.sweepAt(t, t0.Add(time.Second)) // nothing new: no second line
	if n := strings.Count(logs.String(), "session facts pushed out by their bounds"); n != 1 ||
		!strings.Contains(logs.String(), "items_evicted=2") {
		t.Errorf("logged %d times, want once with items_evicted=2:\n%s", n, logs.String())
	}
}
