// Package audit turns what ahp-opa decides and observes into one trail: an
// append-only JSONL audit log with secrets masked, retries answered from a
// decision cache, decisions joined with the tool.after that reports what
// really happened, and per-session facts that policies can read.
package audit

import "time"

// Record kinds.
const (
	KindDecision    = "decision"
	KindObservation = "observation"
	KindAnomaly     = "anomaly"    // a denied call the harness reports as executed
	KindNoOutcome   = "no_outcome" // a decision no tool.after followed in time
	KindCanary      = "canary"     // the canary policy decided otherwise than the live one
)

// Decision values in decision records.
const (
	DecisionAllow = "allow" // no objection: effects []
	DecisionDeny  = "deny"
	DecisionError = "error" // the harness got a JSON-RPC error
)

// Record is one line of the audit log.
type Record struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	EventID   string    `json:"event_id,omitempty"`
	EventType string    `json:"event_type,omitempty"`
	Source    string    `json:"source,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Tool      *Tool     `json:"tool,omitempty"`

	// Decision records.
	Decision  string   `json:"decision,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Codes     []string `json:"codes,omitempty"`
	Revision  string   `json:"revision,omitempty"`
	LatencyUS int64    `json:"latency_us,omitempty"`
	ErrorCode int      `json:"error_code,omitempty"`
	// CodesTruncated counts the codes left out of Codes.
	CodesTruncated int `json:"codes_truncated,omitempty"`
	// RuleErrors are the deny rule sets that failed for this event.
	RuleErrors []RuleError `json:"rule_errors,omitempty"`
	// WouldDeny are the denies of rules in shadow mode: not answered.
	WouldDeny []WouldDeny `json:"would_deny,omitempty"`
	// Stale marks a decision made without the shared session facts
	// (state.store: redis), which could not be read in time.
	Stale bool `json:"stale,omitempty"`

	// Observation records: tool.after outcome and execution status, or the
	// session.end outcome.
	Outcome   string `json:"outcome,omitempty"`
	Execution string `json:"execution,omitempty"`

	// Anomaly and no_outcome records: the decision they are about.
	DecisionEventID string `json:"decision_event_id,omitempty"`

	// Canary records: what the canary policy decided; the decision fields
	// above hold what the live policy answered.
	Canary *Verdict `json:"canary,omitempty"`

	// Input is the redacted event, only when include_input is set.
	Input map[string]any `json:"input,omitempty"`
}

// RuleError is a deny rule set that failed to evaluate.
type RuleError struct {
	Rule     string `json:"rule"`
	Location string `json:"location,omitempty"`
	Builtin  string `json:"builtin,omitempty"`
	Code     string `json:"code,omitempty"` // of the rule that failed, if it has one
	Message  string `json:"message"`
	Shadow   bool   `json:"shadow,omitempty"`
}

// WouldDeny is a deny a rule in shadow mode made.
type WouldDeny struct {
	Package string `json:"package"`
	Code    string `json:"code,omitempty"`
	Reason  string `json:"reason"`
}

// Tool names the tool of a record.
type Tool struct {
	Name   string `json:"name"`
	Family string `json:"family,omitempty"`
}

// Verdict is a policy's decision in a canary record.
type Verdict struct {
	Decision string   `json:"decision"`
	Reason   string   `json:"reason,omitempty"`
	Codes    []string `json:"codes,omitempty"`
	Revision string   `json:"revision,omitempty"`
}
