package transport

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// parseJSON decodes the first JSON value of data into the policy
// engine's values (ast.Object, *ast.Array, ast.String, ast.Number,
// ast.Boolean, ast.Null) and returns the offset after it. The event is
// parsed once, into what the policy evaluates: no Go maps are built and
// converted again. Numbers keep their text, as with encoding/json's
// UseNumber; a repeated key keeps its last value. Tool inputs carry whole
// files, so the cost per byte of a long string matters: encoding/json
// scans every byte three times through its state machine (about 10 ns a
// byte); this copies a string's unescaped runs in one loop. data must be
// valid UTF-8 (Decode checks it first).
func parseJSON(data []byte) (ast.Value, int, error) {
	p := jsonParser{data: data}
	v, err := p.value()
	if err != nil {
		return nil, p.pos, err
	}
	return v.Value, p.pos, nil
}

// interned are terms for the strings every message repeats (keys and
// common values), shared by every message: looking one up allocates
// nothing. They are never modified.
var interned = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	for _, s := range []string{
		"jsonrpc", "2.0", "id", "method", "params", ahp.MethodIntercept, ahp.MethodObserve,
		"protocolVersion", ahp.Version, "capabilities", "effects", ahp.EffectDeny, "event",
		"source", "type", ahp.EventToolBefore, ahp.EventToolAfter, "time", "session", "cwd", "workspaceRoots",
		"tool", "name", "kind", "input", "origin", "native", "mcp", "call", "path", "callId",
		"agent", "version", "command", "description", "file_path", "content", "old_string",
		"new_string", "pattern", "url", "prompt", "timeout", "shell", "file_read", "file_write",
		"file_edit", "search", "fetch", "Bash", "Read", "Write", "Edit", "Glob", "Grep", "toolName",
		"server", "outcome", "status", "execution", "reason", "error", "class", "message", "durationMs", "fileChanges", "subscriptionId",
	} {
		m[s] = ast.StringTerm(s)
	}
	return m
}()

var (
	termTrue  = ast.BooleanTerm(true)
	termFalse = ast.BooleanTerm(false)
	termNull  = ast.NullTerm()
)

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

var errJSONSyntax = errors.New("invalid JSON")

type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (*ast.Term, error) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, errJSONSyntax
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == 't':
		return termTrue, p.literal("true")
	case c == 'f':
		return termFalse, p.literal("false")
	case c == 'n':
		return termNull, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, errJSONSyntax
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return errJSONSyntax
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) enter() error {
	if p.depth++; p.depth > maxJSONDepth {
		return errJSONSyntax
	}
	p.pos++ // the opening bracket
	return nil
}

func (p *jsonParser) object() (*ast.Term, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	var items [][2]*ast.Term
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return ast.NewTerm(ast.NewObject()), nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, errJSONSyntax
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, errJSONSyntax
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, [2]*ast.Term{k, v}) // a repeated key: the last wins, as with encoding/json
		p.space()
		if p.pos >= len(p.data) {
			return nil, errJSONSyntax
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return ast.NewTerm(ast.NewObject(items...)), nil
		default:
			return nil, errJSONSyntax
		}
	}
}

func (p *jsonParser) array() (*ast.Term, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	var a []*ast.Term
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return ast.ArrayTerm(), nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, errJSONSyntax
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return ast.ArrayTerm(a...), nil
		default:
			return nil, errJSONSyntax
		}
	}
}

func (p *jsonParser) number() (*ast.Term, error) {
	d, start := p.data, p.pos
	i := start
	if d[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		return nil, errJSONSyntax
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			return nil, errJSONSyntax
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			return nil, errJSONSyntax
		}
	}
	p.pos = i
	return ast.NumberTerm(json.Number(d[start:i])), nil
}

// str decodes the string at p.pos (its opening quote).
func (p *jsonParser) str() (*ast.Term, error) {
	d := p.data
	i := p.pos + 1
	start := i
	for i < len(d) {
		c := d[i]
		if c == '"' {
			p.pos = i + 1
			if t, ok := interned[string(d[start:i])]; ok {
				return t, nil
			}
			return ast.StringTerm(string(d[start:i])), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		i++
	}
	// Escapes: find the closing quote first, so that the result is built
	// in one allocation (unescaping never makes a string longer).
	end := i
	for end < len(d) && d[end] != '"' {
		if d[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(d) {
		return nil, errJSONSyntax
	}
	var b strings.Builder
	b.Grow(end - start)
	b.Write(d[start:i])
	for i < end {
		c := d[i]
		if c < 0x20 {
			return nil, errJSONSyntax
		}
		if c != '\\' {
			run := i
			for i < end && d[i] != '\\' && d[i] >= 0x20 {
				i++
			}
			b.Write(d[run:i])
			continue
		}
		switch e := d[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(d[i+2 : end])
			if r < 0 {
				return nil, errJSONSyntax
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A valid pair is one rune; anything else is U+FFFD and
				// the next escape stands alone, as in encoding/json.
				if r2 := hex4Escape(d[i:end]); r2 >= 0 {
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						b.WriteRune(dec)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
			continue
		default:
			return nil, errJSONSyntax
		}
		i += 2
	}
	p.pos = end + 1
	return ast.StringTerm(b.String()), nil
}

// hex4 reads four hex digits; -1 when they are not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// hex4Escape reads a \uXXXX escape; -1 when b does not start with one.
func hex4Escape(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	return hex4(b[2:])
}
