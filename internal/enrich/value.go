package enrich

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// keyTerms are the keys of tool.input the enrichment reads, and those of
// input.ahp that DescribeCall reads, made once: a lookup then allocates
// nothing. The event's own fields (tool, session, source) come typed from
// transport.Event.
var keyTerms = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	for _, list := range [][]string{
		{"command", "cmd", "url", "uri", "urls", "prompt", "edits", "new_string", "file_path",
			"patch", "action", "args", "workdir", "pattern"},
		{InputKey, "tool", "family", "paths", "urls", "shell", "commands", "name", "redirects", "op", "path", "host", "base", "home_rel"},
		pathKeys, pathListKeys, ContentKeys,
	} {
		for _, k := range list {
			m[k] = ast.StringTerm(k)
		}
	}
	for _, f := range append(append([]adapters.Field{}, commandFields...), workdirFields...) {
		for _, k := range f {
			m[k] = ast.StringTerm(k)
		}
	}
	return m
}()

// field returns the value of obj's key; nil when obj is nil or lacks it.
func field(obj ast.Object, key string) ast.Value {
	if obj == nil {
		return nil
	}
	k, ok := keyTerms[key]
	if !ok {
		k = ast.StringTerm(key)
	}
	if t := obj.Get(k); t != nil {
		return t.Value
	}
	return nil
}

// object returns obj's key when it is an object, else nil.
func object(obj ast.Object, key string) ast.Object {
	o, _ := field(obj, key).(ast.Object)
	return o
}

// text returns obj's key when it is a string.
func text(obj ast.Object, key string) (string, bool) {
	s, ok := field(obj, key).(ast.String)
	return string(s), ok
}

// elems returns the elements of obj's key when it is an array, else nil.
func elems(obj ast.Object, key string) []*ast.Term {
	a, ok := field(obj, key).(*ast.Array)
	if !ok {
		return nil
	}
	out := make([]*ast.Term, a.Len())
	for i := range out {
		out[i] = a.Elem(i)
	}
	return out
}

// texts returns the strings of a field that may hold one or several:
// a string is a list of one, an array's or a set's string elements are
// the list. Harnesses disagree on the shape (Copilot CLI's grep sends
// paths as one string, another tool sends path as a list), and what a
// field names must not depend on which shape it came in.
func texts(v ast.Value) []string {
	switch x := v.(type) {
	case ast.String:
		return []string{string(x)}
	case *ast.Array:
		out := make([]string, 0, x.Len())
		for i := range x.Len() {
			if s, ok := x.Elem(i).Value.(ast.String); ok {
				out = append(out, string(s))
			}
		}
		return out
	case ast.Set:
		var out []string
		x.Foreach(func(t *ast.Term) {
			if s, ok := t.Value.(ast.String); ok {
				out = append(out, string(s))
			}
		})
		return out
	}
	return nil
}

// asText returns a value that is a string.
func asText(v ast.Value) (string, bool) {
	s, ok := v.(ast.String)
	return string(s), ok
}
