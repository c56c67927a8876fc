package enrich

import (
	"github.com/ahp-opa/ahp-opa/internal/shell"
	"github.com/open-policy-agent/opa/v1/ast"
)

// Facts about code a command runs that the analysis cannot read:
// input.ahp.shell.dynamic_code and .unbounded list the indices of the
// commands so marked, so that a rule about them starts with a ref OPA's
// rule index skips when the list is missing; each such command carries
// dynamic_code: true or unbounded: true.
var (
	keyDynamicCode = ast.StringTerm("dynamic_code")
	keyUnbounded   = ast.StringTerm("unbounded")
)

// appendCodeFlags adds a command's dynamic_code and unbounded flags.
func appendCodeFlags(items [][2]*ast.Term, c *shell.Command) [][2]*ast.Term {
	if c.DynamicCode {
		items = append(items, [2]*ast.Term{keyDynamicCode, termTrue})
	}
	if c.Unbounded {
		items = append(items, [2]*ast.Term{keyUnbounded, termTrue})
	}
	return items
}

// appendCodeIndex adds the lists of commands that run dynamic code or
// start copies of themselves without bound; nothing when none does.
func appendCodeIndex(items [][2]*ast.Term, cmds []shell.Command) [][2]*ast.Term {
	var dynamic, unbounded []*ast.Term
	for i := range cmds {
		if cmds[i].DynamicCode {
			dynamic = append(dynamic, ast.InternedTerm(i))
		}
		if cmds[i].Unbounded {
			unbounded = append(unbounded, ast.InternedTerm(i))
		}
	}
	if dynamic != nil {
		items = append(items, [2]*ast.Term{keyDynamicCode, ast.ArrayTerm(dynamic...)})
	}
	if unbounded != nil {
		items = append(items, [2]*ast.Term{keyUnbounded, ast.ArrayTerm(unbounded...)})
	}
	return items
}
