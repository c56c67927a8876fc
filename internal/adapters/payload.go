package adapters

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// MaxPayloadBytes bounds a native payload. Cursor's beforeReadFile carries
// the whole file, so this is generous; it matches the stdio message limit.
const MaxPayloadBytes = 8 << 20

// Parse maps a native payload of agent to an AHP event. now stamps events
// whose payload has no timestamp. The error wraps ErrPayload (or is
// ErrUnknownAgent) and names fields, never their values.
func Parse(agent string, payload []byte, now time.Time) (*Event, error) {
	ev, _, err := parse(agent, payload, now)
	return ev, err
}

// parse is Parse that also returns the native hook event the payload
// names, when it names one, even if the rest cannot be mapped: Run answers
// an unusable observation differently from an unusable pre-tool call.
func parse(agent string, payload []byte, now time.Time) (*Event, string, error) {
	a, ok := agents[agent]
	if !ok {
		return nil, "", fmt.Errorf("%w %q (want one of %s)", ErrUnknownAgent, agent, strings.Join(Names, ", "))
	}
	p, err := decode(payload)
	if err != nil {
		return nil, "", err
	}
	hook := a.hook(p)
	ev, err := a.parse(p, hook, now)
	if err != nil {
		return nil, hook, fmt.Errorf("%w: %s %s", ErrPayload, agent, err)
	}
	ev.Agent, ev.Size = agent, len(payload)
	return ev, hook, nil
}

// payload is one decoded native payload.
type payload map[string]any

func decode(data []byte) (payload, error) {
	if len(data) > MaxPayloadBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPayload, MaxPayloadBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: stdin was empty (the agent sent no payload)", ErrPayload)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrPayload, err)
	}
	if dec.More() || len(bytes.TrimSpace(data[dec.InputOffset():])) != 0 {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrPayload)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrPayload)
	}
	return m, nil
}

func (p payload) str(key string) string {
	s, _ := p[key].(string)
	return s
}

func (p payload) has(key string) bool {
	_, ok := p[key]
	return ok
}

// object returns an object field; a JSON string holding an object is
// parsed (Copilot's toolArgs, Cursor's beforeMCPExecution tool_input).
// Anything else present is wrapped as {"value": v}, so that tool.input is
// always an object (B-RPC-7) and nothing is lost.
func (p payload) object(key string) map[string]any {
	switch v := p[key].(type) {
	case map[string]any:
		return v
	case nil:
		return map[string]any{}
	case string:
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err == nil && m != nil && !dec.More() {
			return m
		}
		return map[string]any{"value": v}
	default:
		return map[string]any{"value": v}
	}
}

// digest hashes the parts that identify an event, so that a payload the
// agent re-sends gets the same event id (B-DUP-1).
func digest(parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// canonical is the payload re-encoded with sorted keys, for hashing.
func (p payload) canonical() string {
	b, _ := json.Marshal(map[string]any(p))
	return string(b)
}

// stamp returns the RFC 3339 time of the payload: an ISO string or Unix
// milliseconds under key, else now.
func (p payload) stamp(key string, now time.Time) string {
	switch v := p[key].(type) {
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	case json.Number:
		if ms, err := v.Int64(); err == nil && ms > 0 {
			return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
		}
	}
	return now.UTC().Format(time.RFC3339Nano)
}

// call is what the mapping knows of one tool call.
type call struct {
	id      string // native call id; "" means synthesized
	name    string
	input   map[string]any
	kind    string
	mcp     map[string]any // the AHP mcp descriptor; nil for a native tool
	dir     string         // the directory the call runs in, when it names one
	outcome string         // tool.after only
	errMsg  string         // tool.after with outcome error
	elapsed any            // tool.after duration in ms, when known (json.Number)
}

// session is what the mapping knows of the session.
type session struct {
	id      string
	cwd     string
	roots   []string
	model   string
	agentID string // subagent
	agentTy string
}

// mapped is the common part of every event an agent maps.
type mapped struct {
	agent, hook string
	native      payload
	time        string
	session     session
}

func (m *mapped) sessionObject() map[string]any {
	s := m.session
	if s.id == "" {
		return nil
	}
	o := map[string]any{"id": s.id}
	if s.cwd != "" {
		o["cwd"] = s.cwd
	}
	if len(s.roots) > 0 {
		roots := make([]any, len(s.roots))
		for i, r := range s.roots {
			roots[i] = r
		}
		o["workspaceRoots"] = roots
	}
	if s.model != "" {
		o["model"] = s.model
	}
	if s.agentID != "" {
		a := map[string]any{"id": s.agentID}
		if s.agentTy != "" {
			a["type"] = s.agentTy
		}
		o["agent"] = a
	}
	return o
}

// base is the object every mapped event starts from.
func (m *mapped) base(typ, id string) map[string]any {
	o := map[string]any{
		"id":     "ahp-opa-" + id,
		"source": SourcePrefix + m.agent,
		"type":   typ,
		"time":   m.time,
		"native": map[string]any(m.native),
		"extensions": map[string]any{
			ExtensionKey: map[string]any{"agent": m.agent, "hook": m.hook},
		},
	}
	if s := m.sessionObject(); s != nil {
		o["session"] = s
	}
	return o
}

// toolEvent builds tool.before or tool.after for a call.
func (m *mapped) toolEvent(typ string, c call) *Event {
	var id string
	callObj := map[string]any{"id": c.id}
	if c.id == "" {
		h := digest(m.agent, m.hook, m.native.canonical())
		id = h
		callObj = map[string]any{"id": "ahp-opa-call-" + h[:24], "synthesized": true}
	} else {
		id = digest(m.agent, m.session.id, c.id, m.hook)
	}
	// The directory a call runs in is where its relative paths start: the
	// engine resolves them against session.cwd, and the session's own
	// directory stays the workspace root.
	if c.dir != "" && m.session.id != "" {
		dir := c.dir
		if !isAbs(dir) && m.session.cwd != "" {
			dir = path.Join(m.session.cwd, dir)
		}
		if isAbs(dir) && dir != m.session.cwd {
			if len(m.session.roots) == 0 && m.session.cwd != "" {
				m.session.roots = []string{m.session.cwd}
			}
			m.session.cwd = dir
		}
	}
	o := m.base(typ, id)
	origin, pathLabel := ahp.OriginNative, "native"
	tool := map[string]any{"name": c.name, "kind": c.kind, "input": c.input}
	if c.mcp != nil {
		origin, pathLabel = ahp.OriginMCP, "mcp"
		tool["mcp"] = c.mcp
	}
	tool["origin"] = origin
	o["tool"] = tool
	o["call"] = callObj
	o["path"] = pathLabel
	if typ == ahp.EventToolAfter {
		o["items"] = []any{}
		o["outcome"] = c.outcome
		switch c.outcome {
		case "denied":
			o["execution"] = map[string]any{"status": "skipped", "reason": "policy"}
		default:
			o["execution"] = map[string]any{"status": ahp.ExecutionExecuted}
		}
		if c.outcome == "error" {
			msg := c.errMsg
			if msg == "" {
				msg = "the tool failed"
			}
			o["error"] = map[string]any{"class": "tool_error", "message": msg}
		}
		// A call that never ran has no duration (the schema forbids one).
		if n, ok := c.elapsed.(json.Number); ok && c.outcome != "denied" {
			if f, err := n.Float64(); err == nil && f >= 0 {
				o["durationMs"] = n
			}
		}
	}
	return &Event{Hook: m.hook, Type: typ, Object: o}
}

// sessionStart builds session.start; trigger is the native source.
func (m *mapped) sessionStart(trigger, version, permissionMode string) *Event {
	m.ensureSession()
	switch trigger {
	case "startup", "resume", "clear", "compact", "fork":
	default:
		trigger = "startup" // Copilot's "new", Cursor's absent source
	}
	if version == "" {
		version = "unknown"
	}
	if permissionMode == "" {
		permissionMode = "unknown"
	}
	o := m.base(ahp.EventSessionStart, digest(m.agent, m.session.id, m.hook, m.time))
	o["trigger"] = trigger
	o["harness"] = map[string]any{"name": m.agent, "version": version}
	o["permissionMode"] = permissionMode
	o["manifest"] = map[string]any{}
	o["items"] = []any{}
	return &Event{Hook: m.hook, Type: ahp.EventSessionStart, Object: o}
}

// sessionEnd builds session.end from the native reason.
func (m *mapped) sessionEnd(reason, outcome string) *Event {
	m.ensureSession()
	if reason == "" {
		reason = "unknown"
	}
	o := m.base(ahp.EventSessionEnd, digest(m.agent, m.session.id, m.hook, reason))
	o["outcome"] = outcome
	o["reason"] = reason
	return &Event{Hook: m.hook, Type: ahp.EventSessionEnd, Object: o}
}

// ensureSession gives session events, which require a session, a stable
// synthesized id when the payload has none.
func (m *mapped) ensureSession() {
	if m.session.id == "" {
		m.session.id = "ahp-opa-session-" + digest(m.agent, m.native.canonical())[:24]
	}
}

// none is a hook event that maps to no AHP boundary.
func (m *mapped) none() *Event { return &Event{Hook: m.hook, Type: TypeNone} }

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || (len(p) >= 3 && p[1] == ':' && (p[2] == '/' || p[2] == '\\'))
}

// sessionEndOutcome maps the native end reasons of every agent.
func sessionEndOutcome(reason string) string {
	switch reason {
	case "clear", "resume", "logout", "prompt_input_exit", "exit", "completed", "complete", "user_exit", "other":
		return "completed"
	case "aborted", "abort", "user_close", "window_close":
		return "cancelled"
	case "error", "timeout":
		return "error"
	}
	return "unknown"
}

// mcpNamed splits a Claude Code / Codex MCP tool name mcp__server__tool.
// A plugin server (mcp__plugin_p_s__tool) keeps its whole segment.
func mcpNamed(name string) map[string]any {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return nil
	}
	server, tool, ok := strings.Cut(rest, "__")
	if !ok || server == "" || tool == "" {
		return nil
	}
	return mcpDescriptor(server, tool, "inferred", nil)
}

// mcpDescriptor is the AHP mcp object. connection nil means the agent did
// not say how the server is reached.
func mcpDescriptor(server, tool, provenance string, connection map[string]any) map[string]any {
	if connection == nil {
		connection = map[string]any{
			"transport": "_unknown",
			"gaps": []any{
				map[string]any{"path": "addressForm", "reason": "not reported by the agent"},
				map[string]any{"path": "address", "reason": "not reported by the agent"},
			},
		}
	}
	return map[string]any{
		"server":     map[string]any{"id": server, "name": server},
		"toolName":   tool,
		"provenance": provenance,
		"connection": connection,
	}
}
