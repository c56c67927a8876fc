package test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// reverseDNS is the pattern of effect codes and extension keys (PROTOCOL.md §3).
var reverseDNS = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$`)

// reply is one decoded response line.
type reply struct {
	line   string
	obj    map[string]any
	idJSON string // canonical JSON text of the id: `"x"`, `7`, `null`

	isError bool
	code    int64
	message string
	data    map[string]any // error data when it is an object

	effects []map[string]any // result effects
}

func (r *reply) String() string { return r.line }

// denyEffect returns the single deny effect, or nil.
func (r *reply) denyEffect() map[string]any {
	if r.isError || len(r.effects) != 1 || r.effects[0]["type"] != "deny" {
		return nil
	}
	return r.effects[0]
}

// replyProblems checks one stdout line against the wire contract: a single
// UTF-8 JSON object (B-STDIO-1), a JSON-RPC response with result xor error
// (B-RPC-3, B-ERR-1), a result carrying protocolVersion "draft" (B-VER-3)
// and an effect array (B-EFF-1) holding only advertised effects (B-EFF-2),
// deny effects with only their four keys (B-EFF-3), at most one deny
// (B-EFF-5); and, when the shared schemas are available, against
// json-rpc-message plus intercept-response or the errorResponse definition.
// It returns what was decoded (nil if the line is not a JSON object) and
// every problem found.
func replyProblems(line string, advertised []string) (*reply, []string) {
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }

	if !utf8.ValidString(line) {
		add("line is not valid UTF-8 (B-STDIO-1)")
	}
	if strings.ContainsAny(line, "\r\n") {
		add("line holds a raw CR or LF (B-STDIO-1)")
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		add("line is not a JSON object: %v", err)
		return nil, probs
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		add("line holds more than one JSON value")
	}
	r := &reply{line: line, obj: obj}

	if obj["jsonrpc"] != "2.0" {
		add(`jsonrpc is %v, want "2.0"`, obj["jsonrpc"])
	}
	id, hasID := obj["id"]
	switch v := id.(type) {
	case nil, string:
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			add("id %s is not an integer", v)
		}
	default:
		add("id has type %T", id)
	}
	if !hasID {
		add("response has no id member (B-ERR-1)")
	}
	r.idJSON = jsonText(id)

	result, hasResult := obj["result"]
	errVal, hasError := obj["error"]
	if hasResult == hasError {
		add("response must carry exactly one of result and error (B-RPC-3)")
	}
	if hasError {
		r.isError = true
		e, ok := errVal.(map[string]any)
		if !ok {
			add("error is not an object")
		} else {
			code, ok := e["code"].(json.Number)
			n, err := code.Int64()
			if !ok || err != nil {
				add("error.code %v is not an integer (B-ERR-1)", e["code"])
			}
			r.code = n
			r.message, ok = e["message"].(string)
			if !ok || r.message == "" {
				add("error.message must be a non-empty string (B-ERR-1)")
			}
			r.data, _ = e["data"].(map[string]any)
		}
	}
	if hasResult && !hasError {
		res, ok := result.(map[string]any)
		if !ok {
			add("result is not an object")
		} else {
			if res["protocolVersion"] != "draft" {
				add(`result.protocolVersion is %v, want "draft" (B-VER-3)`, res["protocolVersion"])
			}
			if _, ok := res["manifest"]; ok {
				add("intercept result must not carry manifest")
			}
			list, ok := res["effects"].([]any)
			if !ok {
				add("result.effects is %v, want an array (B-EFF-1)", res["effects"])
			}
			denies := 0
			for i, e := range list {
				eff, ok := e.(map[string]any)
				if !ok {
					add("effect %d is not an object", i)
					continue
				}
				r.effects = append(r.effects, eff)
				typ, _ := eff["type"].(string)
				if !slices.Contains(advertised, typ) {
					add("effect %d has type %q, not advertised in %q (B-EFF-2)", i, typ, advertised)
				}
				if typ == "deny" {
					denies++
					probs = append(probs, denyProblems(i, eff)...)
				}
			}
			if denies > 1 {
				add("%d deny effects in one response, want at most one (B-EFF-5)", denies)
			}
		}
	}
	probs = append(probs, schemaProblems(line, hasResult, hasError)...)
	return r, probs
}

func denyProblems(i int, eff map[string]any) []string {
	var probs []string
	add := func(format string, a ...any) {
		probs = append(probs, fmt.Sprintf("deny effect %d: ", i)+fmt.Sprintf(format, a...))
	}
	for k := range eff {
		switch k {
		case "type", "reason", "code", "extensions":
		default:
			add("unknown key %q (B-EFF-3)", k)
		}
	}
	if s, ok := eff["reason"].(string); !ok || s == "" {
		add("reason must be a non-empty string")
	}
	if c, ok := eff["code"]; ok {
		if s, ok := c.(string); !ok || !reverseDNS.MatchString(s) {
			add("code %v is not reverse-DNS", c)
		}
	}
	if x, ok := eff["extensions"]; ok {
		m, ok := x.(map[string]any)
		if !ok {
			add("extensions is not an object")
		}
		for k := range m {
			if !reverseDNS.MatchString(k) {
				add("extension key %q is not reverse-DNS", k)
			}
		}
	}
	return probs
}

// mustReply parses a line that must be a valid response to a request
// advertising deny; every problem fails the test.
func mustReply(tb testing.TB, line string) *reply {
	tb.Helper()
	return mustReplyAdvertising(tb, line, []string{"deny"})
}

func mustReplyAdvertising(tb testing.TB, line string, advertised []string) *reply {
	tb.Helper()
	r, probs := replyProblems(line, advertised)
	for _, p := range probs {
		tb.Errorf("invalid reply: %s\n  line: %s", p, line)
	}
	if r == nil {
		tb.FailNow()
	}
	return r
}

// Assertions on replies.

func wantID(tb testing.TB, r *reply, id any) {
	tb.Helper()
	if want := jsonText(id); r.idJSON != want {
		tb.Errorf("reply id %s, want %s (B-RPC-3)\n  line: %s", r.idJSON, want, r.line)
	}
}

func wantNoObjection(tb testing.TB, r *reply) {
	tb.Helper()
	if r.isError || len(r.effects) != 0 {
		tb.Errorf("want a result with effects [], got %s", r.line)
	}
}

func wantDeny(tb testing.TB, r *reply) map[string]any {
	tb.Helper()
	d := r.denyEffect()
	if d == nil {
		tb.Errorf("want a result with one deny effect, got %s", r.line)
	}
	return d
}

func wantError(tb testing.TB, r *reply, code int64) {
	tb.Helper()
	if !r.isError || r.code != code {
		tb.Errorf("want error %d, got %s", code, r.line)
	}
}

// wantSupported checks error data.supported (B-VER-2, B-INT-2).
func wantSupported(tb testing.TB, r *reply, want ...string) {
	tb.Helper()
	got, _ := r.data["supported"].([]any)
	wantList := make([]any, len(want))
	for i, w := range want {
		wantList[i] = w
	}
	if !reflect.DeepEqual(got, wantList) {
		tb.Errorf("error data.supported = %v, want %q\n  line: %s", r.data["supported"], want, r.line)
	}
}

// JSON Schemas from the shared conformance folder.

const schemaBase = "https://agenthooksprotocol.org/schemas/draft/"

type schemaSet struct {
	message   *jsonschema.Schema // json-rpc-message
	response  *jsonschema.Schema // intercept-response
	errorResp *jsonschema.Schema // common#/$defs/errorResponse
	request   *jsonschema.Schema // intercept-request
	observe   *jsonschema.Schema // observe-notification
}

var (
	schemasOnce sync.Once
	schemas     *schemaSet
	schemasErr  error
)

// loadSchemas compiles the draft schemas once. Every file is registered
// under its $id so that relative $refs resolve locally; nothing is fetched.
// It returns nil, nil when the shared material is absent.
func loadSchemas() (*schemaSet, error) {
	schemasOnce.Do(func() {
		if sharedDir == "" {
			return
		}
		schemas, schemasErr = compileSchemas(filepath.Join(sharedDir, "conformance", "schema", "draft"))
	})
	return schemas, schemasErr
}

func compileSchemas(dir string) (*schemaSet, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		url := schemaBase + e.Name()
		if m, ok := doc.(map[string]any); ok {
			if id, ok := m["$id"].(string); ok && id != "" {
				url = id
			}
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	var s schemaSet
	for _, x := range []struct {
		dst **jsonschema.Schema
		loc string
	}{
		{&s.message, "json-rpc-message.schema.json"},
		{&s.response, "intercept-response.schema.json"},
		{&s.errorResp, "common.schema.json#/$defs/errorResponse"},
		{&s.request, "intercept-request.schema.json"},
		{&s.observe, "observe-notification.schema.json"},
	} {
		sch, err := c.Compile(schemaBase + x.loc)
		if err != nil {
			return nil, fmt.Errorf("compiling %s: %w", x.loc, err)
		}
		*x.dst = sch
	}
	return &s, nil
}

// validateJSON validates one JSON text against a schema.
func validateJSON(sch *jsonschema.Schema, text string) error {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

func schemaProblems(line string, hasResult, hasError bool) []string {
	s, err := loadSchemas()
	if err != nil {
		return []string{"loading the shared JSON Schemas: " + err.Error()}
	}
	if s == nil {
		return nil // shared material absent: structural checks only
	}
	var probs []string
	check := func(name string, sch *jsonschema.Schema) {
		if err := validateJSON(sch, line); err != nil {
			probs = append(probs, fmt.Sprintf("fails %s: %s", name, schemaErrorText(err)))
		}
	}
	check("json-rpc-message.schema.json", s.message)
	if hasResult {
		check("intercept-response.schema.json", s.response)
	}
	if hasError {
		check("common.schema.json#/$defs/errorResponse", s.errorResp)
	}
	return probs
}

// schemaErrorText spells out every failed keyword of a validation error,
// not only the top-level summary.
func schemaErrorText(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Sprintf("%#v", ve)
	}
	return err.Error()
}
