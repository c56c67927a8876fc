package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// agent is what the package knows of one agent: how to read its payloads
// and how it spells a deny.
type agent struct {
	// hook names the native hook event of a payload ("" when it names
	// none); parse maps the payload sent by that hook.
	hook  func(p payload) string
	parse func(p payload, hook string, now time.Time) (*Event, error)
	// deny returns the agent's deny object for a hook event ("" when the
	// event is unknown, as when no payload could be read).
	deny func(hook, reason string) any
	// ask, when set, returns the agent's answer that puts a call to the
	// user's own approval prompt; nil for agents that have none
	// (Codex marks an ask failed and runs the tool, Copilot and Cursor
	// treat it as a deny or ignore it).
	ask func(hook, reason string) any
}

var agents = map[string]agent{
	ClaudeCode: claudeCode,
	Codex:      codex,
	GeminiCLI:  geminiCLI,
	Cursor:     cursor,
	Copilot:    copilot,
}

// noDecision is the answer every agent reads as "no decision; the normal
// permission flow applies" (CONTRACTS.md R1). It is {} rather than empty
// stdout because Cursor with failClosed treats empty output as a failure.
var noDecision = []byte("{}\n")

// MaxReasonBytes bounds a deny reason: Claude Code cuts hook output at
// 10,000 characters, and a reason is read by a model and a user.
const MaxReasonBytes = 4096

// Render returns the native answer to a decision about an event the agent
// sent with hook event hook. A deny of a pre-tool event is the agent's deny
// form at exit 0 (CONTRACTS.md R2, R5); everything else, including no
// objection and any answer to an observation, is "no decision" — never
// allow or approve, which would skip the user's own permission prompt.
func Render(agentName, hook string, d Decision) (Answer, error) {
	a, ok := agents[agentName]
	if !ok {
		return Answer{}, fmt.Errorf("%w %q", ErrUnknownAgent, agentName)
	}
	if !d.Deny || !preTool(hook) {
		return Answer{Stdout: noDecision}, nil
	}
	if d.Ask && a.ask != nil && hook != "" {
		return Answer{Stdout: encode(a.ask(hook, reasonText(d.Reason)))}, nil
	}
	return Answer{Stdout: encode(a.deny(hook, reasonText(d.Reason)))}, nil
}

// Refuse returns the agent's deny answer for when no decision can be made
// and the hook fails closed. reason says what went wrong and how to fix it.
func Refuse(agentName, reason string) (Answer, error) {
	a, ok := agents[agentName]
	if !ok {
		return Answer{}, fmt.Errorf("%w %q", ErrUnknownAgent, agentName)
	}
	return Answer{Stdout: encode(a.deny("", reasonText(reason)))}, nil
}

// Pass is Refuse's fail-open counterpart: "no decision" on stdout, and the
// reason on stderr, where the agent logs it without blocking.
func Pass(agentName, reason string) (Answer, error) {
	if !Known(agentName) {
		return Answer{}, fmt.Errorf("%w %q", ErrUnknownAgent, agentName)
	}
	return Answer{Stdout: noDecision, Stderr: oneLine(reasonText(reason)) + " (fail-open: the call goes ahead)"}, nil
}

// preTool reports whether a hook event can be denied. An unknown hook
// ("", as for Refuse) counts as one: failing closed must block.
func preTool(hook string) bool {
	switch hook {
	case "PostToolUse", "PostToolUseFailure", "AfterTool", "SessionStart", "SessionEnd",
		"postToolUse", "postToolUseFailure", "afterShellExecution", "afterMCPExecution",
		"afterFileEdit", "sessionStart", "sessionEnd":
		return false
	}
	return true
}

func reasonText(r string) string {
	r = strings.TrimSpace(r)
	if r == "" {
		r = "ahp-opa: blocked by policy."
	}
	if len(r) > MaxReasonBytes {
		cut := MaxReasonBytes - len("…")
		for cut > 0 && r[cut]&0xC0 == 0x80 {
			cut--
		}
		r = r[:cut] + "…"
	}
	return r
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// encode writes one compact JSON object and a newline; HTML characters stay
// as they are, since a person reads the reason.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only maps of strings are encoded here; this cannot happen.
		panic(fmt.Sprintf("adapters: encoding an answer: %v", err))
	}
	return b.Bytes()
}
