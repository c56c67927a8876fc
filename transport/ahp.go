package transport

import (
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// DefaultMaxInputBytes is the largest hooks/intercept message a backend
// decides, on every binding: the reference SDK's message limit. A larger
// message, up to the framing limit (DefaultMaxMessageBytes), is still read
// whole and answered, with a deny that says it was too large to check.
const DefaultMaxInputBytes = 4 << 20

// Event is the validated view of a tool event. Object holds the whole event
// exactly as decoded, unknown fields included, as the policy engine's
// values: it is what policies see, parsed once from the message. It is
// only read.
type Event struct {
	ID        string
	Source    string
	Type      string
	Time      time.Time
	CallID    string // call.id, or the legacy tool.callId
	SessionID string // empty when the event carries no session
	Tool      Tool
	Object    ast.Object
}

// Map returns the event as Go values (map[string]any, []any, string,
// json.Number, bool, nil), for the layers that record or transform it.
func (e *Event) Map() map[string]any {
	if e.Object == nil {
		return nil
	}
	return goMap(e.Object)
}

// Tool is the tool part of a tool event.
type Tool struct {
	Name   string
	Kind   string // optional classification, an open set
	Origin string // "native", "mcp", or empty on legacy events
	Input  ast.Object
}

// InterceptRequest is a validated hooks/intercept request for tool.before.
type InterceptRequest struct {
	ID    ID
	Event Event
	// Effects lists the effect types the harness enforces for this request.
	Effects []string
	// Size is the length in bytes of the message that carried the
	// request, so that the decider can refuse to judge what is larger
	// than it checks (DefaultMaxInputBytes).
	Size int
}

// Advertises reports whether the harness accepts the effect type.
func (r *InterceptRequest) Advertises(effect string) bool {
	for _, e := range r.Effects {
		if e == effect {
			return true
		}
	}
	return false
}

// InterceptResult is the result of hooks/intercept.
type InterceptResult struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Effects         []Effect `json:"effects"`
}

// NewResult returns a result carrying the given effects; nil becomes the
// empty list, which means "no objection" (B-EFF-1).
func NewResult(effects ...Effect) *InterceptResult {
	if effects == nil {
		effects = []Effect{}
	}
	return &InterceptResult{ProtocolVersion: ahp.Version, Effects: effects}
}

// Effect is a deny effect. Its fields are the only keys a deny may carry at
// this protocol revision (B-EFF-3).
type Effect struct {
	Type       string         `json:"type"`
	Reason     string         `json:"reason"`
	Code       string         `json:"code,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Observation is a hooks/observe notification. Params is nil when the
// notification carried no params object; Event is nil when params had no
// event object. Problem says why the notification is invalid, if it is.
type Observation struct {
	Method  string
	Params  map[string]any
	Event   map[string]any
	Problem string
}
