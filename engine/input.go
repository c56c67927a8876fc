package engine

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/enrich"
)

// InputKey is the key of the policy input under which ahp-opa adds what it
// derives from the event (see package enrich).
const InputKey = enrich.InputKey

// InputOptions configure the enrichment.
type InputOptions = enrich.Options

// Input builds the whole policy input for an event with the engine's
// options, every part of input.ahp included.
func (e *Engine) Input(event map[string]any) (ast.Value, error) {
	return BuildInput(event, e.inputOptions())
}

func (e *Engine) inputOptions() InputOptions { return InputOptions{Home: e.opts.Home} }

// BuildInput returns the policy input for a tool.before event: the event
// itself plus the whole enrichment under input.ahp.
func BuildInput(event map[string]any, opts InputOptions) (ast.Value, error) {
	return enrich.BuildInput(event, opts)
}

// Reenrich returns input, a policy input built for a policy that reads
// only some of input.ahp, with the whole enrichment of event instead; the
// session facts it held are kept.
func Reenrich(input ast.Value, event ast.Object, opts InputOptions) ast.Value {
	full := FullInput(event, opts)
	if s := ahpObject(input).Get(ast.InternedTerm("session")); s != nil {
		ahpObject(full).Insert(ast.InternedTerm("session"), s)
	}
	return full
}

// ahpObject returns input.ahp, or an empty object.
func ahpObject(input ast.Value) ast.Object {
	if obj, ok := input.(ast.Object); ok {
		if t := obj.Get(ast.InternedTerm(InputKey)); t != nil {
			if ahp, ok := t.Value.(ast.Object); ok {
				return ahp
			}
		}
	}
	return ast.NewObject()
}

// FullInput returns the policy input for an event with every part of
// input.ahp but the session facts. The event is not modified.
func FullInput(event ast.Object, opts InputOptions) ast.Object {
	return inputWith(event, opts, enrich.All)
}

// inputWith returns the policy input for an event with the given parts of
// input.ahp.
func inputWith(event ast.Object, opts InputOptions, parts enrich.Parts) ast.Object {
	in := ast.NewObject()
	event.Foreach(func(k, v *ast.Term) { in.Insert(k, v) })
	in.Insert(ast.InternedTerm(InputKey), ast.NewTerm(enrich.Enrich(event, opts, parts).Object))
	return in
}
