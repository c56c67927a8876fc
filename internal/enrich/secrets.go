package enrich

import (
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/secretscan"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// maxSecretFindings bounds the live findings of input.ahp.secrets, and
// separately its placeholders: one finding is enough to deny, and a file
// of a million stand-ins must not make a million objects.
const maxSecretFindings = 64

// ContentKeys are the input fields in which file tools carry the text they
// write; they are the library's tools._content_keys (a test keeps them
// equal).
var ContentKeys = []string{"content", "new_string", "new_str", "file_text", "code_edit", "text", "patch", "input", "diff", "new_source", "contents", "CodeContent", "file_content", "new_str_1"}

var (
	keySecrets     = ast.StringTerm("secrets")
	keyKind        = ast.StringTerm("kind")
	keyField       = ast.StringTerm("field")
	keyEdit        = ast.StringTerm("edit")
	keyRedirect    = ast.StringTerm("redirect")
	keyOffset      = ast.StringTerm("offset")
	keyLength      = ast.StringTerm("length")
	keyLine        = ast.StringTerm("line")
	keyPlaceholder = ast.StringTerm("placeholder")
)

// secrets returns input.ahp.secrets: the secret shapes in the text a call
// writes, with where each one is (never the secret). Only the fields that
// carry written text are scanned: the content fields of file-write and
// file-edit tools, and for a shell command its here-documents and the
// arguments of echo and printf. Nil when there is none.
func secrets(c *call, cmds []shell.Command) *ast.Term {
	// Live findings and placeholders have a budget each, so that stand-ins
	// in one field cannot crowd out a live token in another.
	var live, stand []*ast.Term
	addFound := func(found []secretscan.Finding, where ...[2]*ast.Term) {
		for _, f := range found {
			if f.Placeholder && len(stand) >= maxSecretFindings || !f.Placeholder && len(live) >= maxSecretFindings {
				continue
			}
			items := make([][2]*ast.Term, 0, len(where)+5)
			items = append(items, [2]*ast.Term{keyKind, ast.StringTerm(f.Kind)})
			items = append(items, where...)
			items = append(items,
				[2]*ast.Term{keyOffset, ast.InternedTerm(f.Offset)},
				[2]*ast.Term{keyLength, ast.InternedTerm(f.Length)},
				[2]*ast.Term{keyLine, ast.InternedTerm(f.Line)},
			)
			if f.Placeholder {
				items = append(items, [2]*ast.Term{keyPlaceholder, termTrue})
				stand = append(stand, ast.ObjectTerm(items...))
			} else {
				live = append(live, ast.ObjectTerm(items...))
			}
		}
	}
	add := func(text string, where ...[2]*ast.Term) {
		if len(live) >= maxSecretFindings && len(stand) >= maxSecretFindings {
			return
		}
		addFound(secretscan.Scan(text, maxSecretFindings), where...)
	}
	switch c.family {
	case FamilyFileWrite, FamilyFileEdit:
		for _, t := range c.texts {
			if t.edit < 0 {
				add(t.text, [2]*ast.Term{keyField, ast.StringTerm(t.field)})
			} else {
				add(t.text, [2]*ast.Term{keyField, ast.StringTerm(t.field)}, [2]*ast.Term{keyEdit, ast.InternedTerm(t.edit)})
			}
		}
	case FamilyShell:
		for i := range cmds {
			cmd := &cmds[i]
			for r, rd := range cmd.Redirects {
				add(rd.Body, [2]*ast.Term{keyCommand, ast.InternedTerm(i)}, [2]*ast.Term{keyRedirect, ast.InternedTerm(r)})
			}
			if cmd.Name == "echo" || cmd.Name == "printf" {
				for a, arg := range cmd.Args() {
					add(arg, [2]*ast.Term{keyCommand, ast.InternedTerm(i)}, [2]*ast.Term{keyArg, ast.InternedTerm(a)})
				}
			}
		}
	}
	// Text that leaves the machine: marked outbound (outbound.go).
	outbound(c, cmds, func(text string, where ...[2]*ast.Term) {
		where = append(where, [2]*ast.Term{keyOutbound, termTrue})
		add(text, where...)
		// Sent away, a secret with no known shape is one too: a password
		// in a URL, the value of a secret-named pair.
		if len(live) < maxSecretFindings {
			addFound(namedSecrets(text), where...)
		}
	})
	if live == nil && stand == nil {
		return nil
	}
	return ast.ArrayTerm(append(live, stand...)...)
}
