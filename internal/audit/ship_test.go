package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// logServer is an OPA-compatible decision-log endpoint that can be down.
type logServer struct {
	mu     sync.Mutex
	down   bool
	events []map[string]any
	got    chan struct{}
}

func (l *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down || r.URL.Path != "/logs" || r.Header.Get("Content-Encoding") != "gzip" {
		w.WriteHeader(http.StatusServiceUnavailable)
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
	l.events = append(l.events, batch...)
	select {
	case l.got <- struct{}{}:
	default:
	}
}

func httpUpload(url string) Upload {
	return func(ctx context.Context, body []byte) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/logs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode/100 != 2 {
			return errors.New(resp.Status)
		}
		return nil
	}
}

func TestShipperSurvivesOutage(t *testing.T) {
	ls := &logServer{down: true, got: make(chan struct{}, 1)}
	srv := httptest.NewServer(ls)
	defer srv.Close()
	var cfg ShipConfig
	cfg.Reporting.BufferSizeLimitEvents = 3
	cfg.Reporting.MinDelaySeconds = 3600 // flushes are driven by the test
	s := NewShipper(cfg, httpUpload(srv.URL), map[string]string{"id": "test"}, nil)

	for _, id := range []string{"e1", "e2", "e3", "e4"} {
		s.Add(&Record{Kind: KindDecision, EventID: id, Source: "urn:h", Decision: DecisionDeny, Codes: []string{"c.x"}, Revision: "r7"})
	}
	s.Add(&Record{Kind: KindObservation, EventID: "o1"}) // not a decision
	s.flush(context.Background())                        // the service is down
	if _, dropped, failures := s.Stats(); dropped != 1 || failures != 1 {
		t.Fatalf("dropped %d failures %d, want 1 and 1", dropped, failures)
	}
	ls.mu.Lock()
	ls.down = false
	ls.mu.Unlock()
	s.Close() // the final flush delivers what was kept
	if sent, _, _ := s.Stats(); sent != 3 || len(ls.events) != 3 {
		t.Fatalf("sent %d, server has %d events", sent, len(ls.events))
	}
	ev := ls.events[0]
	res := ev["result"].(map[string]any)
	if ev["decision_id"] != "urn:h#e2" || ev["path"] != "ahp/tool/before" || res["decision"] != "deny" ||
		ev["bundles"].(map[string]any)["ahp-opa"].(map[string]any)["revision"] != "r7" ||
		ev["labels"].(map[string]any)["id"] != "test" {
		t.Errorf("event = %v", ev)
	}
}

func TestAuditorShipsDecisions(t *testing.T) {
	ls := &logServer{got: make(chan struct{}, 1)}
	srv := httptest.NewServer(ls)
	defer srv.Close()
	s := NewShipper(ShipConfig{}, httpUpload(srv.URL), nil, nil)
	a := newAuditor(t, Config{}, nil)
	a.ShipTo(s)
	a.Interceptor(&fakeJudge{deny: true}).Intercept(context.Background(), newReq("e1", "Danger", "x"))
	flush(t, a)
	s.Close()
	if len(ls.events) != 1 {
		t.Fatalf("server got %d events", len(ls.events))
	}
}
