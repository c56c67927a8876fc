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

// Event is an AHP event, parsed once from the message: every layer after
// the transport (enrichment, engine, audit, rollout, the native-hook
// adapters' server side) reads these fields instead of the tree. Object
// holds the whole event exactly as decoded, unknown fields included, as
// the policy engine's values: it is what policies see. Nothing is
// modified once parsed.
//
// A tool.before event that reached an Interceptor is validated (see
// ParseToolEvent); an observed event is read leniently (EventOf): a field
// of the wrong type is left empty.
type Event struct {
	ID      string
	Source  string
	Type    string
	Time    time.Time
	CallID  string  // call.id, or the legacy tool.callId
	Session Session // zero when the event carries no session
	Tool    Tool    // zero on events without a tool (session.*)

	// Observation fields (tool.after, session.end); empty on tool.before.
	Outcome   string    // outcome: ok, error, denied, cancelled, timeout; completed… on session.end
	Execution Execution // execution of a tool.after
	Failure   Failure   // error of a tool.after whose outcome is error
	Reason    string    // reason of a session.end

	Object ast.Object
}

// Session is the session part of an event.
type Session struct {
	ID             string
	Cwd            string
	WorkspaceRoots []string // the string entries of session.workspaceRoots
}

// Tool is the tool part of a tool event.
type Tool struct {
	Name   string
	Kind   string // optional classification, an open set
	Origin string // ahp.OriginNative, ahp.OriginMCP, or empty on legacy events
	// MCP is the tool.mcp descriptor of an MCP tool, zero when absent.
	MCP MCP
	// Input is tool.input as the policy sees it; the enrichment reads the
	// tool-specific fields in it.
	Input ast.Object
}

// MCP names the server and tool of an MCP call (tool.mcp).
type MCP struct {
	Server   string // server.name, else server.id
	ToolName string // toolName
}

// Execution is the execution object of a tool.after.
type Execution struct {
	Status string // ahp.ExecutionExecuted, or "skipped"
	Reason string // why it was skipped
}

// Failure is the error object of a tool.after.
type Failure struct {
	Class   string
	Message string
}

// Map returns the event as Go values (map[string]any, []any, string,
// json.Number, bool, nil), for the layers that record it (the audit
// record's input).
func (e *Event) Map() map[string]any {
	if e.Object == nil {
		return nil
	}
	return goMap(e.Object)
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

// Observation is a hooks/observe notification. Problem says why it is
// invalid, if it is; an invalid notification is never answered (B-OBS-1),
// only counted, and has no Event. A valid one carries its event, read
// once (EventOf).
type Observation struct {
	Method  string
	Event   *Event
	Problem string
	// Ack is set when the binding acknowledges the notification once the
	// Observer returns (HTTP's 202): the Observer may then wait until the
	// observation is safe, and refuse it with an error the sender can
	// retry on. Without it nothing is answered and nothing may wait.
	Ack bool
}
