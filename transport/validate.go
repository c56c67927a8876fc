package transport

import (
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
	event, reason := parseToolEvent(ev)
	if reason != "" {
		return nil, InvalidParams(reason)
	}
	if field := numberOutOfRange(ev, "event"); field != "" {
		return nil, InvalidParams(field + " is a number out of the range a policy can evaluate")
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

// parseToolEvent validates the fields of a tool event that this backend
// relies on. It accepts both the current shape (call.id, path, tool.origin)
// and the legacy one (tool.callId, neither path nor origin), and ignores
// every field it does not know (B-RPC-6, B-INT-5). The reason it returns
// names the offending field, never its value.
func parseToolEvent(ev ast.Object) (Event, string) {
	e := Event{Object: ev}
	var ok bool
	if e.ID, ok = nonEmpty(ev, "id"); !ok {
		return e, "event.id must be a non-empty string"
	}
	if e.Source, ok = nonEmpty(ev, "source"); !ok {
		return e, "event.source must be a non-empty string"
	}
	e.Type, _ = getString(ev, "type")
	ts, ok := getString(ev, "time")
	if !ok {
		return e, "event.time must be an RFC 3339 date-time string"
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return e, "event.time must be an RFC 3339 date-time string"
	}
	e.Time = t

	tool, ok := get(ev, "tool").(ast.Object)
	if !ok {
		return e, "event.tool must be an object"
	}
	if e.Tool.Name, ok = nonEmpty(tool, "name"); !ok {
		return e, "event.tool.name must be a non-empty string"
	}
	if e.Tool.Input, ok = get(tool, "input").(ast.Object); !ok {
		return e, "event.tool.input must be an object"
	}
	if v := get(tool, "kind"); v != nil {
		if e.Tool.Kind, ok = asString(v); !ok {
			return e, "event.tool.kind must be a string"
		}
	}
	if v := get(tool, "origin"); v != nil {
		e.Tool.Origin, _ = asString(v)
		if e.Tool.Origin != "native" && e.Tool.Origin != "mcp" {
			return e, `event.tool.origin must be "native" or "mcp"`
		}
	}

	if v := get(ev, "call"); v != nil {
		call, ok := v.(ast.Object)
		if !ok {
			return e, "event.call must be an object"
		}
		if e.CallID, ok = nonEmpty(call, "id"); !ok {
			return e, "event.call.id must be a non-empty string"
		}
	} else if e.CallID, ok = nonEmpty(tool, "callId"); !ok {
		return e, "event.call.id (or the legacy event.tool.callId) is required"
	}
	if v := get(ev, "path"); v != nil {
		if s, ok := asString(v); !ok || s == "" {
			return e, "event.path must be a non-empty string"
		}
	}
	if v := get(ev, "session"); v != nil {
		s, ok := v.(ast.Object)
		if !ok {
			return e, "event.session must be an object"
		}
		if e.SessionID, ok = nonEmpty(s, "id"); !ok {
			return e, "event.session.id must be a non-empty string"
		}
	}
	return e, ""
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
