// Package adapters meets AI coding agents at their native hooks: it maps a
// native hook payload (Claude Code, Codex, Gemini CLI, Cursor, Copilot) to
// an AHP event and an AHP decision back to the agent's native answer.
//
// It does not import OPA or the engine, so the small hook client can link it
// and still answer in the agent's own words when no decision can be made.
//
// What a policy sees of a mapped event (documented in docs/hooks.md):
//   - source is SourcePrefix + the agent name ("urn:ahp-opa:agent:codex"),
//     which the engine lifts to input.ahp.agent;
//   - native holds the whole payload exactly as the agent sent it;
//   - extensions[ExtensionKey] holds {"agent", "hook"}: the agent and the
//     native hook event name (PreToolUse, BeforeTool, beforeShellExecution…).
package adapters

import (
	"errors"
	"slices"
)

// Answer is everything a native hook process gives its agent.
type Answer struct {
	Stdout []byte // exactly one JSON object, or nothing
	Stderr string // one line for the user, or nothing
	Exit   int    // the process exit status
}

// Agent names, as `ahp-opa hook NAME` spells them.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	GeminiCLI  = "gemini-cli"
	Cursor     = "cursor"
	Copilot    = "copilot"
)

// Names lists the agents as `ahp-opa hook NAME` spells them.
var Names = []string{ClaudeCode, Codex, GeminiCLI, Cursor, Copilot}

// Known reports whether name is one of Names.
func Known(name string) bool { return slices.Contains(Names, name) }

// HTTPAgents lists the agents that can send their hook payload over HTTP
// themselves (a "type": "http" hook) and read the answer from the 2xx
// body. Codex, Gemini CLI and Cursor have command hooks only.
var HTTPAgents = []string{ClaudeCode, Copilot}

// HasHTTPHook reports whether name is one of HTTPAgents.
func HasHTTPHook(name string) bool { return slices.Contains(HTTPAgents, name) }

// SourcePrefix starts the source of every mapped event; the agent name
// follows. The engine reads it back into input.ahp.agent.
const SourcePrefix = "urn:ahp-opa:agent:"

// ExtensionKey is the event extension naming the agent and its hook event.
const ExtensionKey = "dev.ahp-opa.hook"

// TypeNone is the Event.Type of a hook event that is not a tool or
// session boundary (Claude Code's Stop, Notification…): it is answered
// with "no decision" and never decided. Every other Event.Type is one of
// the ahp.Event* types.
const TypeNone = ""

// Event is one native payload mapped to AHP.
type Event struct {
	Agent string // one of Names
	Hook  string // the native hook event name, as the agent spelled it (or inferred)
	Type  string // an ahp.Event* type, or TypeNone
	// Object is the AHP event, ready for json.Marshal or the engine: only
	// maps, slices, strings, bools, json.Number and nil. Nil for TypeNone.
	Object map[string]any
	// Size is the length of the native payload in bytes, which the engine
	// compares with max_input_bytes as it does an AHP message's.
	Size int
}

// Decision is what the policy said about a tool.before event.
type Decision struct {
	Deny   bool
	Reason string // shown to the model (and usually the user) when Deny
	Code   string // the matched rule's code, for logs; optional
	// Ask, with Deny, says a human may approve the call: an agent with an
	// approval prompt of its own (Claude Code, Gemini CLI) asks the user;
	// every other agent denies, with a reason that says so.
	Ask bool
}

// Errors callers branch on.
var (
	// ErrUnknownAgent: the agent name is not one of Names.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrPayload wraps every reason a payload cannot be mapped.
	ErrPayload = errors.New("unusable hook payload")
)
