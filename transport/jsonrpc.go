package transport

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// ID is a JSON-RPC request id: a string or an integer. It keeps its JSON
// encoding so that a reply echoes the id exactly (B-RPC-3); the zero ID is
// null, used when the request id is unknown.
type ID struct {
	raw string // JSON text; empty means null
	str string // the Go value of a string id
}

// StringID returns the ID for a string id.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a Go string always marshals
	return ID{raw: string(b), str: s}
}

// IntID returns the ID for an integer id.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// parseID accepts what a request id may be: a non-empty string or an
// integer. Anything else, null included, is invalid.
func parseID(v ast.Value) (ID, bool) {
	switch v := v.(type) {
	case ast.String:
		if v == "" {
			return ID{}, false
		}
		return StringID(string(v)), true
	case ast.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			return ID{}, false
		}
		return ID{raw: s}, true
	}
	return ID{}, false
}

// Str returns the value of a string id; ok is false for integer and null ids.
func (id ID) Str() (s string, ok bool) {
	return id.str, len(id.raw) > 0 && id.raw[0] == '"'
}

// IsNull reports whether the id is null (unknown).
func (id ID) IsNull() bool { return id.raw == "" }

// String returns the id as JSON text: a quoted string, an integer or null.
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// MarshalJSON encodes the id exactly as it arrived.
func (id ID) MarshalJSON() ([]byte, error) { return []byte(id.String()), nil }

// Error is a JSON-RPC error object. Handlers return it to choose the code a
// client sees; any other error becomes a generic backend_internal_error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if r, ok := e.Data.(ReasonData); ok && r.Reason != "" {
		return fmt.Sprintf("jsonrpc error %d: %s: %s", e.Code, e.Message, r.Reason)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// ReasonData is the error data used for machine-readable hints (B-ERR-4).
// Reasons name fields and rules, never values taken from the request, so no
// secret from the input can travel back in an error (B-ERR-2).
type ReasonData struct {
	Reason    string   `json:"reason,omitempty"`
	Supported []string `json:"supported,omitempty"`
}

func newError(code int, message, reason string) *Error {
	e := &Error{Code: code, Message: message}
	if reason != "" {
		e.Data = ReasonData{Reason: reason}
	}
	return e
}

// ParseError reports a message that is not a single UTF-8 JSON object.
func ParseError(reason string) *Error { return newError(ahp.CodeParseError, "Parse error", reason) }

// InvalidRequest reports a JSON object that is not a valid JSON-RPC request.
func InvalidRequest(reason string) *Error {
	return newError(ahp.CodeInvalidRequest, "Invalid request", reason)
}

// InvalidParams reports a request whose params are structurally invalid.
func InvalidParams(reason string) *Error {
	return newError(ahp.CodeInvalidParams, "Invalid params", reason)
}

// Unavailable reports that the backend cannot evaluate right now, for
// example because no policy is loaded yet.
func Unavailable(reason string) *Error {
	return newError(ahp.CodeBackendUnavailable, "Backend unavailable", reason)
}

// InternalError reports that evaluation failed. The message is deliberately
// generic: internals and inputs stay in the server's own logs.
func InternalError(reason string) *Error {
	return newError(ahp.CodeBackendInternalError, "Backend failed while evaluating the request", reason)
}

// Response is one JSON-RPC response: a result xor an error, never both.
type Response struct {
	ID     ID
	Result *InterceptResult
	Error  *Error
}

// MarshalJSON encodes the response on a single line; encoding/json escapes
// every control character, so the output never holds a raw newline.
func (r *Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// AppendJSON appends the encoding of MarshalJSON to b. The envelope is
// written directly; only an error or the effects of a deny go through
// encoding/json.
func (r *Response) AppendJSON(b []byte) ([]byte, error) {
	if r.Error == nil && r.Result == nil {
		return b, fmt.Errorf("transport: response %s has neither result nor error", r.ID)
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, r.ID.String()...)
	if r.Error != nil {
		e, err := json.Marshal(r.Error)
		if err != nil {
			return b, err
		}
		b = append(b, `,"error":`...)
		b = append(b, e...)
		return append(b, '}'), nil
	}
	b = append(b, `,"result":{"protocolVersion":`...)
	if v := r.Result.ProtocolVersion; v == ahp.Version {
		b = append(b, `"`+ahp.Version+`"`...)
	} else {
		q, _ := json.Marshal(v) // a string always marshals
		b = append(b, q...)
	}
	b = append(b, `,"effects":`...)
	if len(r.Result.Effects) == 0 {
		b = append(b, "[]"...)
	} else {
		e, err := json.Marshal(r.Result.Effects)
		if err != nil {
			return b, err
		}
		b = append(b, e...)
	}
	return append(b, "}}"...), nil
}
