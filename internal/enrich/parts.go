package enrich

import (
	"github.com/open-policy-agent/opa/v1/ast"
)

// Parts is a set of the keys of input.ahp. A policy pays only for the
// parts it reads: Needed finds them in the compiled modules.
type Parts uint16

// The parts of input.ahp, one per key.
const (
	Version   Parts = 1 << iota // input.ahp.version
	Tool                        // input.ahp.tool: name, family, mcp, paths, urls
	Workspace                   // input.ahp.workspace
	Shell                       // input.ahp.shell: the parsed command
	Secrets                     // input.ahp.secrets
	Sensitive                   // input.ahp.sensitive
	Writes                      // input.ahp.writes
	Agent                       // input.ahp.agent
	// Session is input.ahp.session, which the engine fills from session
	// facts rather than from the event.
	Session

	// All is every part: what a policy that reads input.ahp as a whole,
	// or with a key it computes, gets.
	All = Version | Tool | Workspace | Shell | Secrets | Sensitive | Writes | Agent | Session
	// Describe is what a description of the call (the tool, the paths and
	// hosts it touches) reads.
	Describe = Tool | Shell
)

var partKeys = map[string]Parts{
	"version": Version, "tool": Tool, "workspace": Workspace, "shell": Shell,
	"secrets": Secrets, "sensitive": Sensitive, "writes": Writes, "agent": Agent,
	"session": Session,
}

// Has reports whether p holds every part of q.
func (p Parts) Has(q Parts) bool { return p&q == q }

// Needed returns the parts of input.ahp that the compiled modules read.
// Any use of input it cannot pin to one key (input as a whole, input.ahp,
// input[x], input.ahp[x]) reads everything. Keys that are not parts read
// nothing: input.ahp.nonesuch is undefined either way.
func Needed(modules map[string]*ast.Module) Parts {
	var need Parts
	visit := func(x any) bool {
		if need == All {
			return true
		}
		switch x := x.(type) {
		case ast.Ref:
			need |= refParts(x)
			// The head of the ref is visited as a var next; a ref starting
			// with input is fully judged here, so skip its terms.
			return x.HasPrefix(ast.InputRootRef)
		case ast.Var:
			if x.Equal(ast.InputRootDocument.Value) {
				need = All // input itself, passed whole
			}
		}
		return false
	}
	for _, m := range modules {
		ast.NewGenericVisitor(visit).Walk(m)
	}
	return need
}

// refParts returns what a reference reads of input.ahp.
func refParts(r ast.Ref) Parts {
	if !r.HasPrefix(ast.InputRootRef) {
		return 0
	}
	if len(r) < 2 {
		return All
	}
	k, ok := r[1].Value.(ast.String)
	if !ok {
		return All
	}
	if k != InputKey {
		return 0
	}
	if len(r) < 3 {
		return All
	}
	k, ok = r[2].Value.(ast.String)
	if !ok {
		return All
	}
	return partKeys[string(k)]
}
