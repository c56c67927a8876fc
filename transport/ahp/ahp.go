// Package ahp names the words of the Agent Hooks Protocol (AHP) that
// ahp-opa speaks: its version, methods, event types, effect types, the
// values of the observation fields it reads, and its error codes.
//
// It imports the standard library only, so that every layer can share
// the one vocabulary, the small hook client included, without linking
// the transport or the policy engine.
package ahp

// Version is the only protocol version this backend speaks (B-VER-1).
const Version = "draft"

// Methods.
const (
	MethodIntercept = "hooks/intercept"
	MethodObserve   = "hooks/observe"
)

// Event types. hooks/intercept evaluates EventToolBefore only; the others
// are observed (B-OBS-5).
const (
	EventToolBefore   = "tool.before"
	EventToolAfter    = "tool.after"
	EventSessionStart = "session.start"
	EventSessionEnd   = "session.end"
)

// EffectDeny is the effect type this backend can return.
const EffectDeny = "deny"

// ExtensionApprovable is the extension of a deny effect that says a human
// may approve the call (every rule that denied it marked it approvable).
// A native hook whose agent has an approval prompt asks the user instead
// of denying.
const ExtensionApprovable = "dev.ahp-opa.approvable"

// Tool origins (tool.origin).
const (
	OriginNative = "native"
	OriginMCP    = "mcp"
)

// ExecutionExecuted is the execution.status of a tool.after whose tool ran;
// every other status says it was skipped.
const ExecutionExecuted = "executed"

// JSON-RPC 2.0 error codes, and the server-error codes AHP reserves.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602

	CodeUnsupportedProtocolVersion = -32001
	CodeUnsupportedEvent           = -32002
	CodeBackendUnavailable         = -32003
	CodeBackendInternalError       = -32004
)
