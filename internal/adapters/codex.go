package adapters

import "time"

// Codex: PreToolUse, PostToolUse, SessionStart in Claude Code's dialect
// (CONTRACTS.md §2), with model, turn_id, and local_shell's argv command
// and workdir. No SessionEnd. Deny is Claude Code's form, nothing more.
var codex = agent{
	hook: claudeHook,
	parse: func(p payload, hook string, now time.Time) (*Event, error) {
		ev, err := parseClaudeLike(Codex, p, hook, now)
		if err != nil || ev.Object == nil {
			return ev, err
		}
		if t := p.str("turn_id"); t != "" {
			ev.Object["turn"] = map[string]any{"id": t}
		}
		return ev, nil
	},
	deny: claudeDeny,
}
