// Package adapters meets AI coding agents at their native hooks: it maps a
// native pre-tool payload (Claude Code, Codex, Gemini CLI, Cursor, Copilot)
// to an AHP event and an AHP decision back to the agent's native answer.
//
// It does not import OPA or the engine, so the small hook client can link it
// and still answer in the agent's own words when no decision can be made.
package adapters

// Answer is everything a native hook process gives its agent.
type Answer struct {
	Stdout []byte // exactly one JSON object, or nothing
	Stderr string // one line for the user, or nothing
	Exit   int    // the process exit status
}

// Names lists the agents as `ahp-opa hook NAME` spells them.
var Names = []string{"claude-code", "codex", "gemini-cli", "cursor", "copilot"}
