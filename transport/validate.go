package transport

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// reverseDNS is the pattern AHP uses for effect codes and extension keys.
var reverseDNS = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`)

// IsReverseDNS reports whether s is a valid AHP code or extension key.
func IsReverseDNS(s string) bool { return reverseDNS.MatchString(s) }

// fieldsAbsentBefore must not appear on tool.before: they describe an
// operation that has already run.
var fieldsAbsentBefore = [...]string{"outcome", "execution", "durationMs", "fileChanges"}

// parseInterceptParams applies steps 5 to 7 of the validation order
// (PROTOCOL.md §6) to the params of a hooks/intercept request.
func parseInterceptParams(id ID, params ast.Value) (*InterceptRequest, *Error) {
	p, ok := params.(ast.Object)
	if !ok {
		return nil, unsupportedVersion("params must be an object carrying protocolVersion")
	}
	if v, ok := getString(p, "protocolVersion"); !ok || v != ahp.Version {
		return nil, unsupportedVersion(`params.protocolVersion must be "draft"`)
	}
	ev, ok := get(p, "event").(ast.Object)
	if !ok {
		return nil, InvalidParams("params.event must be an object")
	}
	typ, ok := getString(ev, "type")
	if !ok {
		return nil, InvalidParams("event.type must be a string")
	}
	if typ != ahp.EventToolBefore {
		return nil, &Error{
			Code:    ahp.CodeUnsupportedEvent,
			Message: "Unsupported event",
			Data: ReasonData{
				Reason:    "hooks/intercept evaluates tool.before only",
				Supported: []string{ahp.EventToolBefore},
			},
		}
	}
	caps, ok := get(p, "capabilities").(ast.Object)
	if !ok {
		return nil, InvalidParams("params.capabilities must be an object")
	}
	list, ok := get(caps, "effects").(*ast.Array)
	if !ok {
		return nil, InvalidParams("params.capabilities.effects must be an array")
	}
	effects := make([]string, 0, list.Len())
	for i := range list.Len() {
		s, ok := list.Elem(i).Value.(ast.String)
		if !ok {
			return nil, InvalidParams("params.capabilities.effects must hold strings")
		}
		effects = append(effects, string(s))
	}
	event, perr := parseToolEvent(ev)
	if perr != nil {
		return nil, perr
	}
	for _, f := range fieldsAbsentBefore {
		if get(ev, f) != nil {
			return nil, InvalidParams("event." + f + " must be absent on tool.before")
		}
	}
	// B-RPC-8: the harness uses the event id as the request id. Only a
	// string id can equal it; integer ids are left alone.
	if sid, isString := id.Str(); isString && sid != event.ID {
		return nil, InvalidParams("request id must equal params.event.id")
	}
	return &InterceptRequest{ID: id, Event: event, Effects: effects}, nil
}

func unsupportedVersion(reason string) *Error {
	return &Error{
		Code:    ahp.CodeUnsupportedProtocolVersion,
		Message: "Unsupported AHP protocol version",
		Data:    ReasonData{Reason: reason, Supported: []string{ahp.Version}},
	}
}

// ParseToolEvent validates obj as a tool event the way hooks/intercept
// does (B-INT-5) and returns its typed view, for the bindings that build
// events themselves (the agents' native hooks). The error is an *Error
// (-32602) whose reason names the offending field, never its value.
func ParseToolEvent(obj ast.Object) (Event, error) {
	e, err := parseToolEvent(obj)
	if err != nil {
		return e, err
	}
	return e, nil
}

func parseToolEvent(obj ast.Object) (Event, *Error) {
	e, reason := parseEvent(obj, true)
	if reason == "" {
		if field := numberOutOfRange(obj, "event"); field != "" {
			reason = field + " is a number out of the range a policy can evaluate"
		}
	}
	if reason != "" {
		return e, InvalidParams(reason)
	}
	return e, nil
}

// EventOf reads obj as an event without validating it, for observations
// and recorded events: a field that is missing or of the wrong type is
// left empty. The observation fields (outcome, execution, error, reason)
// are read too.
func EventOf(obj ast.Object) Event {
	e, _ := parseEvent(obj, false)
	return e
}

// eventParser notes the first problem of a strict parse.
type eventParser struct {
	strict  bool
	problem string
}

func (p *eventParser) fail(reason string) {
	if p.strict && p.problem == "" {
		p.problem = reason
	}
}

// parseEvent reads every field of an event that this backend uses, each
// once. Strict, it validates a tool event: it accepts both the current
// shape (call.id, path, tool.origin) and the legacy one (tool.callId,
// neither path nor origin), ignores every field it does not know (B-RPC-6,
// B-INT-5), and returns the first problem, a reason that names the
// offending field, never its value; the observation fields, which must be
// absent on tool.before, are not read. Lenient, it reads what it can and
// never fails.
func parseEvent(ev ast.Object, strict bool) (Event, string) {
	p := eventParser{strict: strict}
	e := Event{Object: ev}
	var ok bool
	if e.ID, ok = nonEmpty(ev, "id"); !ok {
		p.fail("event.id must be a non-empty string")
	}
	if e.Source, ok = nonEmpty(ev, "source"); !ok {
		p.fail("event.source must be a non-empty string")
	}
	e.Type, _ = getString(ev, "type")
	if ts, ok := getString(ev, "time"); !ok {
		p.fail("event.time must be an RFC 3339 date-time string")
	} else if t, err := time.Parse(time.RFC3339Nano, ts); err != nil {
		p.fail("event.time must be an RFC 3339 date-time string")
	} else {
		e.Time = t
	}

	tool, _ := get(ev, "tool").(ast.Object)
	if tool == nil {
		p.fail("event.tool must be an object")
	} else {
		p.tool(&e.Tool, tool)
	}

	if v := get(ev, "call"); v != nil {
		if call, ok := v.(ast.Object); !ok {
			p.fail("event.call must be an object")
		} else if e.CallID, ok = nonEmpty(call, "id"); !ok {
			p.fail("event.call.id must be a non-empty string")
		}
	} else if e.CallID, ok = nonEmpty(tool, "callId"); !ok {
		p.fail("event.call.id (or the legacy event.tool.callId) is required")
	}
	if v := get(ev, "path"); v != nil {
		if s, ok := asString(v); !ok || s == "" {
			p.fail("event.path must be a non-empty string")
		}
	}
	if v := get(ev, "session"); v != nil {
		if s, ok := v.(ast.Object); !ok {
			p.fail("event.session must be an object")
		} else {
			p.session(&e.Session, s)
		}
	}
	if !strict {
		observed(&e, ev)
	}
	return e, p.problem
}

func (p *eventParser) tool(t *Tool, tool ast.Object) {
	var ok bool
	if t.Name, ok = nonEmpty(tool, "name"); !ok {
		p.fail("event.tool.name must be a non-empty string")
	}
	if t.Input, ok = get(tool, "input").(ast.Object); !ok {
		p.fail("event.tool.input must be an object")
	}
	if v := get(tool, "kind"); v != nil {
		if t.Kind, ok = asString(v); !ok {
			p.fail("event.tool.kind must be a string")
		}
	}
	if v := get(tool, "origin"); v != nil {
		t.Origin, _ = asString(v)
		if t.Origin != ahp.OriginNative && t.Origin != ahp.OriginMCP {
			p.fail(`event.tool.origin must be "native" or "mcp"`)
			t.Origin = ""
		}
	}
	if d, ok := get(tool, "mcp").(ast.Object); ok {
		if s, ok := get(d, "server").(ast.Object); ok {
			if t.MCP.Server, _ = getString(s, "name"); t.MCP.Server == "" {
				t.MCP.Server, _ = getString(s, "id")
			}
		}
		t.MCP.ToolName, _ = getString(d, "toolName")
	}
}

func (p *eventParser) session(s *Session, session ast.Object) {
	var ok bool
	if s.ID, ok = nonEmpty(session, "id"); !ok {
		p.fail("event.session.id must be a non-empty string")
	}
	s.Cwd, _ = getString(session, "cwd")
	if roots, ok := get(session, "workspaceRoots").(*ast.Array); ok {
		s.WorkspaceRoots = make([]string, 0, roots.Len())
		for i := range roots.Len() {
			if r, ok := asString(roots.Elem(i).Value); ok {
				s.WorkspaceRoots = append(s.WorkspaceRoots, r)
			}
		}
	}
}

// observed reads the fields of an observed event's outcome.
func observed(e *Event, ev ast.Object) {
	e.Outcome, _ = getString(ev, "outcome")
	e.Reason, _ = getString(ev, "reason")
	if x, ok := get(ev, "execution").(ast.Object); ok {
		e.Execution.Status, _ = getString(x, "status")
		e.Execution.Reason, _ = getString(x, "reason")
	}
	if f, ok := get(ev, "error").(ast.Object); ok {
		e.Failure.Class, _ = getString(f, "class")
		e.Failure.Message, _ = getString(f, "message")
	}
}

// get returns the value of obj's key, nil when obj is nil or has no such
// key.
func get(obj ast.Object, key string) ast.Value {
	if obj == nil {
		return nil
	}
	k, ok := interned[key]
	if !ok {
		k = ast.StringTerm(key)
	}
	if t := obj.Get(k); t != nil {
		return t.Value
	}
	return nil
}

func asString(v ast.Value) (string, bool) {
	s, ok := v.(ast.String)
	return string(s), ok
}

func getString(obj ast.Object, key string) (string, bool) { return asString(get(obj, key)) }

func nonEmpty(obj ast.Object, key string) (string, bool) {
	s, ok := getString(obj, key)
	return s, ok && s != ""
}

// goMap returns obj as Go values (map[string]any, []any, string,
// json.Number, bool, nil), for the layers that keep or transform them.
func goMap(obj ast.Object) map[string]any {
	m, _ := ast.JSON(obj) // an object parsed from JSON has string keys only
	out, _ := m.(map[string]any)
	return out
}

// maxBinaryExp is the bound the policy engine (OPA) puts on a number's
// binary exponent, beyond which it refuses the number: arithmetic on it
// would cost too much.
const maxBinaryExp = 100_000

// evaluableNumber reports whether a JSON number is within maxBinaryExp.
// Only the exponent forms can be out of range; a small exponent is
// accepted without parsing (a digit is at most 4 bits).
func evaluableNumber(s string) bool {
	for i := range len(s) {
		if s[i]|0x20 != 'e' {
			continue
		}
		if exp, err := strconv.Atoi(s[i+1:]); err == nil && i+max(exp, -exp) <= maxBinaryExp/4 {
			return true
		}
		f, ok := new(big.Float).SetString(s)
		if !ok || f.IsInf() {
			return false
		}
		exp := f.MantExp(nil)
		return exp <= maxBinaryExp && exp >= -maxBinaryExp
	}
	return true
}

// numberOutOfRange returns the path of the first number in v that policy
// evaluation cannot take (1e999999), or "". Checked here so that the harness hears
// which field is wrong (-32602) instead of an internal error.
func numberOutOfRange(v ast.Value, path string) string {
	if !hasBadNumber(v) {
		return ""
	}
	switch v := v.(type) {
	case ast.Object:
		var first *ast.Term
		v.Foreach(func(k, x *ast.Term) {
			// The first key in sorted order, so that the answer is stable.
			if (first == nil || k.Value.Compare(first.Value) < 0) && hasBadNumber(x.Value) {
				first = k
			}
		})
		key, _ := asString(first.Value)
		return numberOutOfRange(v.Get(first).Value, path+"."+key)
	case *ast.Array:
		for i := range v.Len() {
			if x := v.Elem(i).Value; hasBadNumber(x) {
				return numberOutOfRange(x, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	return path
}

func hasBadNumber(v ast.Value) bool {
	switch v := v.(type) {
	case ast.Number:
		return !evaluableNumber(string(v))
	case ast.Object:
		return v.Until(func(_, x *ast.Term) bool { return hasBadNumber(x.Value) })
	case *ast.Array:
		for i := range v.Len() {
			if hasBadNumber(v.Elem(i).Value) {
				return true
			}
		}
	}
	return false
}

// EventOfMap is EventOf for an event held as Go values (map[string]any,
// []any, string, json.Number, float64, bool, nil), the form of the
// native-hook adapters and of audit records: it is converted to the
// policy engine's values once, here.
func EventOfMap(m map[string]any) (Event, error) {
	obj, err := objectOf(m)
	if err != nil {
		return Event{}, err
	}
	return EventOf(obj), nil
}

// objectOf converts an event held as Go values.
func objectOf(m map[string]any) (ast.Object, error) {
	v, err := ast.InterfaceToValue(m)
	if err != nil {
		return nil, fmt.Errorf("event cannot be evaluated: %w", err)
	}
	obj, ok := v.(ast.Object)
	if !ok { // a nil map
		return nil, errors.New("event is not an object")
	}
	return obj, nil
}
