package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ShipConfig is OPA's `decision_logs` block, for the keys ahp-opa reads:
// decisions go to {service}/logs as OPA's decision-log plugin sends them,
// so an existing decision-log service receives them unchanged.
type ShipConfig struct {
	Service   string `koanf:"service"`
	Reporting struct {
		MinDelaySeconds       int `koanf:"min_delay_seconds"`        // upload period; default 5
		BufferSizeLimitEvents int `koanf:"buffer_size_limit_events"` // events kept while the service is down; default 10000
	} `koanf:"reporting"`
}

// Upload sends one gzip-compressed JSON array of decision events.
type Upload func(ctx context.Context, gzipped []byte) error

// Shipper batches decision records and uploads them off the request path.
// While the service is down it keeps the newest events up to its buffer
// limit and drops (and counts) the oldest.
type Shipper struct {
	upload Upload
	period time.Duration
	limit  int
	log    *slog.Logger
	labels map[string]string

	mu      sync.Mutex
	pending []decisionEvent

	sent, dropped, failures atomic.Uint64
	stop                    chan struct{}
	done                    chan struct{}
}

// decisionEvent is one entry of OPA's decision-log format.
type decisionEvent struct {
	Labels     map[string]string         `json:"labels"`
	DecisionID string                    `json:"decision_id"`
	Path       string                    `json:"path"`
	Input      map[string]any            `json:"input,omitempty"`
	Result     decisionResult            `json:"result"`
	Timestamp  time.Time                 `json:"timestamp"`
	Bundles    map[string]map[string]any `json:"bundles,omitempty"`
	Metrics    map[string]int64          `json:"metrics,omitempty"`
}

type decisionResult struct {
	Decision  string   `json:"decision"`
	Reason    string   `json:"reason,omitempty"`
	Codes     []string `json:"codes,omitempty"`
	ErrorCode int      `json:"error_code,omitempty"`
	EventID   string   `json:"event_id"`
	Source    string   `json:"source"`
	SessionID string   `json:"session_id,omitempty"`
	CallID    string   `json:"call_id,omitempty"`
	Tool      *Tool    `json:"tool,omitempty"`
}

// NewShipper starts a shipper; labels identify this instance (OPA's
// labels: id, version).
func NewShipper(cfg ShipConfig, upload Upload, labels map[string]string, log *slog.Logger) *Shipper {
	period := time.Duration(cfg.Reporting.MinDelaySeconds) * time.Second
	if period <= 0 {
		period = 5 * time.Second
	}
	limit := cfg.Reporting.BufferSizeLimitEvents
	if limit <= 0 {
		limit = 10_000
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Shipper{upload: upload, period: period, limit: limit, log: log, labels: labels,
		stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// Add queues a decision record; other kinds are not decisions and are
// ignored. It never blocks on the network.
func (s *Shipper) Add(r *Record) {
	if r.Kind != KindDecision {
		return
	}
	ev := decisionEvent{
		Labels: s.labels, DecisionID: r.Source + "#" + r.EventID, Path: "ahp/tool/before",
		Input: r.Input, Timestamp: r.Time,
		Result: decisionResult{Decision: r.Decision, Reason: r.Reason, Codes: r.Codes, ErrorCode: r.ErrorCode,
			EventID: r.EventID, Source: r.Source, SessionID: r.SessionID, CallID: r.CallID, Tool: r.Tool},
		Metrics: map[string]int64{"timer_rego_query_eval_ns": r.LatencyUS * 1000},
	}
	if r.Revision != "" {
		ev.Bundles = map[string]map[string]any{"ahp-opa": {"revision": r.Revision}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) >= s.limit {
		s.pending = s.pending[1:]
		s.dropped.Add(1)
	}
	s.pending = append(s.pending, ev)
}

func (s *Shipper) run() {
	defer close(s.done)
	t := time.NewTicker(s.period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flush(context.Background())
		case <-s.stop:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s.flush(ctx)
			cancel()
			return
		}
	}
}

// flush uploads what is pending; on failure the events stay for the next
// period.
func (s *Shipper) flush(ctx context.Context) {
	s.mu.Lock()
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	body, err := gzipJSON(batch)
	if err == nil {
		err = s.upload(ctx, body)
	}
	if err != nil {
		s.failures.Add(1)
		s.log.Warn("decision log upload failed; retrying next period", "events", len(batch), "err", err)
		s.mu.Lock()
		keep := append(batch, s.pending...)
		if over := len(keep) - s.limit; over > 0 {
			keep = keep[over:]
			s.dropped.Add(uint64(over))
		}
		s.pending = keep
		s.mu.Unlock()
		return
	}
	s.sent.Add(uint64(len(batch)))
}

func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, fmt.Errorf("encoding decision logs: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing decision logs: %w", err)
	}
	return buf.Bytes(), nil
}

// Close uploads what is pending (within a bound) and stops.
func (s *Shipper) Close() {
	close(s.stop)
	<-s.done
}

// ShipStats counts events sent, dropped for lack of buffer, and failed
// uploads.
func (s *Shipper) Stats() (sent, dropped, failures uint64) {
	return s.sent.Load(), s.dropped.Load(), s.failures.Load()
}
