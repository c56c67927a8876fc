package test

import (
	"compress/gzip"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestDecisionLogsShipped: with decision_logs naming a service, decisions
// reach an OPA-compatible decision-log endpoint (gzip JSON array at /logs).
func TestDecisionLogsShipped(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/logs" || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var batch []map[string]any
		if err := json.NewDecoder(zr).Decode(&batch); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		events = append(events, batch...)
		mu.Unlock()
	}))
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "ahp-opa.yaml")
	yaml := "services:\n  logs:\n    url: " + srv.URL + "\ndecision_logs:\n  service: logs\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startSerial(t, "--config", cfg)
	if r := p.roundTrip(t, interceptLine("dl1", "git push --force origin main")); r.denyEffect() == nil {
		t.Fatalf("want a deny, got %s", r)
	}
	p.roundTrip(t, interceptLine("dl2", "git status"))
	p.closeStdin()
	p.expectCleanExit(t) // the final flush uploads before exit

	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 {
		t.Fatalf("decision-log service got %d events, want 2", len(events))
	}
	got := map[string]string{}
	for _, ev := range events {
		res := ev["result"].(map[string]any)
		got[res["event_id"].(string)] = res["decision"].(string)
	}
	if got["dl1"] != "deny" || got["dl2"] != "allow" {
		t.Errorf("shipped decisions = %v", got)
	}
}
