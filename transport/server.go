package transport

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Interceptor decides a validated tool.before request; it is called from
// several goroutines at once. It returns the
// effects to send, or an error: an *Error is sent as it is, any other error
// becomes a generic backend_internal_error.
type Interceptor interface {
	Intercept(ctx context.Context, req *InterceptRequest) (*InterceptResult, error)
}

// Observer receives hooks/observe notifications, valid or not. It is called
// from several goroutines at once and must not block unless o.Ack is set:
// the intercept path waits for it (B-OBS-2). Its error refuses an
// acknowledged notification (HTTP answers 503); it is ignored otherwise,
// as nothing can be answered.
type Observer interface {
	Observe(ctx context.Context, o *Observation) error
}

// Server routes decoded messages to an Interceptor and an Observer. It is
// shared by every binding; bindings only frame bytes.
type Server struct {
	Interceptor Interceptor
	Observer    Observer     // nil drops notifications
	Logger      *slog.Logger // nil discards
}

// Handle processes one message and returns the response to send, or nil
// when nothing may be sent (a notification, valid or not: B-RPC-4).
func (s *Server) Handle(ctx context.Context, data []byte) *Response {
	resp, _ := s.handle(ctx, data, false)
	return resp
}

// HandleAck is Handle for a binding that acknowledges a notification once
// it is handled (HTTP's 202). The Observer sees Observation.Ack and may
// wait until the observation is safe; its error is returned, with a nil
// Response, for the binding to refuse the notification instead.
func (s *Server) HandleAck(ctx context.Context, data []byte) (*Response, error) {
	return s.handle(ctx, data, true)
}

func (s *Server) handle(ctx context.Context, data []byte, ack bool) (*Response, error) {
	msg, perr := decodeObject(data)
	if perr != nil {
		return &Response{Error: perr}, nil
	}
	idTerm := msg.Get(interned["id"])
	if idTerm == nil {
		return nil, s.notify(ctx, msg, ack)
	}
	return s.request(ctx, msg, idTerm, len(data)), nil
}

// request routes a message with an id; it always produces a reply.
func (s *Server) request(ctx context.Context, msg ast.Object, idTerm *ast.Term, size int) *Response {
	id, ok := parseID(idTerm.Value)
	if !ok {
		return &Response{ID: id, Error: InvalidRequest("id must be a non-empty string or an integer")}
	}
	if v, _ := getString(msg, "jsonrpc"); v != "2.0" {
		return &Response{ID: id, Error: InvalidRequest(`jsonrpc must be "2.0"`)}
	}
	method, _ := getString(msg, "method")
	switch method {
	case "":
		return &Response{ID: id, Error: InvalidRequest("method must be a non-empty string")}
	case ahp.MethodIntercept:
		return s.intercept(ctx, id, get(msg, "params"), size)
	case ahp.MethodObserve:
		// B-OBS-7: an observe with an id is not a notification.
		return &Response{ID: id, Error: InvalidRequest("hooks/observe is a notification and must not carry an id")}
	default:
		return &Response{ID: id, Error: &Error{Code: ahp.CodeMethodNotFound, Message: "Method not found"}}
	}
}

// Decode parses one message: a single UTF-8 JSON object, as Go values.
// Numbers stay json.Number so that ids and integers survive exactly. A
// batch (array) is an invalid request (B-RPC-1); anything else that is
// not an object is a framing error.
func Decode(data []byte) (map[string]any, *Error) {
	obj, perr := decodeObject(data)
	if perr != nil {
		return nil, perr
	}
	m, err := ast.JSON(obj)
	if err != nil {
		return nil, ParseError("message is not valid JSON")
	}
	return m.(map[string]any), nil
}

// decodeObject is Decode into the policy engine's values, which is what
// the policy evaluates: the message is parsed once.
func decodeObject(data []byte) (ast.Object, *Error) {
	if !utf8.Valid(data) {
		return nil, ParseError("message is not valid UTF-8")
	}
	v, end, err := parseJSON(data)
	if err != nil {
		return nil, ParseError("message is not valid JSON")
	}
	if len(bytes.TrimSpace(data[end:])) != 0 {
		return nil, ParseError("message holds more than one JSON value")
	}
	switch v := v.(type) {
	case ast.Object:
		return v, nil
	case *ast.Array:
		return nil, InvalidRequest("batches are not supported")
	default:
		return nil, ParseError("message is not a JSON object")
	}
}

func (s *Server) intercept(ctx context.Context, id ID, params ast.Value, size int) (resp *Response) {
	req, perr := parseInterceptParams(id, params)
	if perr != nil {
		return &Response{ID: id, Error: perr}
	}
	req.Size = size
	defer func() {
		if p := recover(); p != nil {
			s.logger().ErrorContext(ctx, "panic while deciding a request",
				"id", id.String(), "panic", p, "stack", string(debug.Stack()))
			resp = &Response{ID: id, Error: InternalError("")}
		}
	}()
	result, err := s.Interceptor.Intercept(ctx, req)
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			s.logger().ErrorContext(ctx, "intercept failed", "id", id.String(), "err", err)
			rpcErr = InternalError("")
		}
		return &Response{ID: id, Error: rpcErr}
	}
	if result == nil {
		result = NewResult()
	}
	if result.Effects == nil {
		result.Effects = []Effect{}
	}
	return &Response{ID: id, Result: result}
}

// notify routes a message without an id. It never produces a reply; what is
// wrong with it is recorded in the Observation for the Observer to count.
// With ack, the Observer's error is returned for the binding to refuse the
// notification.
func (s *Server) notify(ctx context.Context, msg ast.Object, ack bool) (err error) {
	o := &Observation{Ack: ack}
	o.Method, _ = getString(msg, "method")
	params, _ := get(msg, "params").(ast.Object)
	var event ast.Object
	if params != nil {
		event, _ = get(params, "event").(ast.Object)
	}
	version, _ := getString(params, "protocolVersion")
	switch jsonrpc, _ := getString(msg, "jsonrpc"); {
	case jsonrpc != "2.0":
		o.Problem = `jsonrpc must be "2.0"`
	case o.Method != ahp.MethodObserve:
		o.Problem = "unknown notification method"
	case params == nil:
		o.Problem = "params must be an object"
	case version != ahp.Version:
		o.Problem = "unsupported protocol version"
	case event == nil:
		o.Problem = "params.event must be an object"
	}
	if s.Observer == nil {
		s.logger().DebugContext(ctx, "notification dropped", "method", o.Method, "problem", o.Problem)
		return nil
	}
	if o.Problem == "" {
		ev := EventOf(event)
		o.Event = &ev
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger().ErrorContext(ctx, "panic while observing", "panic", p, "stack", string(debug.Stack()))
			err = InternalError("")
		}
	}()
	return s.Observer.Observe(ctx, o)
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
