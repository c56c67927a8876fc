package transport

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"time"
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
func parseInterceptParams(id ID, params any) (*InterceptRequest, *Error) {
	p, ok := params.(map[string]any)
	if !ok {
		return nil, unsupportedVersion("params must be an object carrying protocolVersion")
	}
	if v, ok := p["protocolVersion"].(string); !ok || v != ProtocolVersion {
		return nil, unsupportedVersion(`params.protocolVersion must be "draft"`)
	}
	ev, ok := p["event"].(map[string]any)
	if !ok {
		return nil, InvalidParams("params.event must be an object")
	}
	typ, ok := ev["type"].(string)
	if !ok {
		return nil, InvalidParams("event.type must be a string")
	}
	if typ != EventToolBefore {
		return nil, &Error{
			Code:    CodeUnsupportedEvent,
			Message: "Unsupported event",
			Data: ReasonData{
				Reason:    "hooks/intercept evaluates tool.before only",
				Supported: []string{EventToolBefore},
			},
		}
	}
	caps, ok := p["capabilities"].(map[string]any)
	if !ok {
		return nil, InvalidParams("params.capabilities must be an object")
	}
	list, ok := caps["effects"].([]any)
	if !ok {
		return nil, InvalidParams("params.capabilities.effects must be an array")
	}
	effects := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, InvalidParams("params.capabilities.effects must hold strings")
		}
		effects = append(effects, s)
	}
	event, reason := parseToolEvent(ev)
	if reason != "" {
		return nil, InvalidParams(reason)
	}
	if field := numberOutOfRange(ev, "event"); field != "" {
		return nil, InvalidParams(field + " is a number out of the range a policy can evaluate")
	}
	for _, f := range fieldsAbsentBefore {
		if _, ok := ev[f]; ok {
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
		Code:    CodeUnsupportedProtocolVersion,
		Message: "Unsupported AHP protocol version",
		Data:    ReasonData{Reason: reason, Supported: []string{ProtocolVersion}},
	}
}

// parseToolEvent validates the fields of a tool event that this backend
// relies on. It accepts both the current shape (call.id, path, tool.origin)
// and the legacy one (tool.callId, neither path nor origin), and ignores
// every field it does not know (B-RPC-6, B-INT-5). The reason it returns
// names the offending field, never its value.
func parseToolEvent(ev map[string]any) (Event, string) {
	e := Event{Object: ev}
	var ok bool
	if e.ID, ok = nonEmpty(ev, "id"); !ok {
		return e, "event.id must be a non-empty string"
	}
	if e.Source, ok = nonEmpty(ev, "source"); !ok {
		return e, "event.source must be a non-empty string"
	}
	e.Type, _ = ev["type"].(string)
	ts, ok := ev["time"].(string)
	if !ok {
		return e, "event.time must be an RFC 3339 date-time string"
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return e, "event.time must be an RFC 3339 date-time string"
	}
	e.Time = t

	tool, ok := ev["tool"].(map[string]any)
	if !ok {
		return e, "event.tool must be an object"
	}
	if e.Tool.Name, ok = nonEmpty(tool, "name"); !ok {
		return e, "event.tool.name must be a non-empty string"
	}
	if e.Tool.Input, ok = tool["input"].(map[string]any); !ok {
		return e, "event.tool.input must be an object"
	}
	if v, present := tool["kind"]; present {
		if e.Tool.Kind, ok = v.(string); !ok {
			return e, "event.tool.kind must be a string"
		}
	}
	if v, present := tool["origin"]; present {
		e.Tool.Origin, _ = v.(string)
		if e.Tool.Origin != "native" && e.Tool.Origin != "mcp" {
			return e, `event.tool.origin must be "native" or "mcp"`
		}
	}

	if v, present := ev["call"]; present {
		call, ok := v.(map[string]any)
		if !ok {
			return e, "event.call must be an object"
		}
		if e.CallID, ok = nonEmpty(call, "id"); !ok {
			return e, "event.call.id must be a non-empty string"
		}
	} else if e.CallID, ok = nonEmpty(tool, "callId"); !ok {
		return e, "event.call.id (or the legacy event.tool.callId) is required"
	}
	if v, present := ev["path"]; present {
		if s, ok := v.(string); !ok || s == "" {
			return e, "event.path must be a non-empty string"
		}
	}
	if v, present := ev["session"]; present {
		s, ok := v.(map[string]any)
		if !ok {
			return e, "event.session must be an object"
		}
		if e.SessionID, ok = nonEmpty(s, "id"); !ok {
			return e, "event.session.id must be a non-empty string"
		}
	}
	return e, ""
}

func nonEmpty(m map[string]any, key string) (string, bool) {
	s, ok := m[key].(string)
	return s, ok && s != ""
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
func numberOutOfRange(v any, path string) string {
	if !hasBadNumber(v) {
		return ""
	}
	switch v := v.(type) {
	case map[string]any:
		first := ""
		for k, x := range v {
			// The first key in sorted order, so that the answer is stable.
			if (first == "" || k < first) && hasBadNumber(x) {
				first = k
			}
		}
		return numberOutOfRange(v[first], path+"."+first)
	case []any:
		for i, x := range v {
			if hasBadNumber(x) {
				return numberOutOfRange(x, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	return path
}

func hasBadNumber(v any) bool {
	switch v := v.(type) {
	case json.Number:
		return !evaluableNumber(string(v))
	case map[string]any:
		for _, x := range v {
			if hasBadNumber(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasBadNumber(x) {
				return true
			}
		}
	}
	return false
}
