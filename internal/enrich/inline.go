package enrich

import (
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/inline"
)

var (
	keyCode          = ast.StringTerm("code")
	keyCall          = ast.StringTerm("call")
	keyLanguage      = ast.StringTerm("language")
	keySource        = ast.StringTerm("source")
	keyCalls         = ast.StringTerm("calls")
	keyDecodes       = ast.StringTerm("decodes")
	keyNetwork       = ast.StringTerm("network")
	keyReverseShell  = ast.StringTerm("reverse_shell")
	keyExecutesStdin = ast.StringTerm("executes_stdin")
	keyDynamicLookup = ast.StringTerm("dynamic_lookup")
	keyEnvDump       = ast.StringTerm("env_dump")
	keyPageSecrets   = ast.StringTerm("page_secrets")
)

// addInline marks, in the command objects cmds, the interpreters that run
// inline code (their code object and dynamic_code flag) and the commands
// that code runs (the call they come from).
func addInline(cmds []*ast.Term, progs []inline.Program) {
	for _, p := range progs {
		if p.Command >= len(cmds) {
			continue
		}
		names := make([]*ast.Term, 0, len(p.Calls))
		seen := map[string]bool{}
		for _, c := range p.Calls {
			if c.Command < len(cmds) {
				cmds[c.Command].Value.(ast.Object).Insert(keyCall, ast.StringTerm(c.Name))
			}
			if !seen[c.Name] {
				seen[c.Name] = true
				names = append(names, ast.StringTerm(c.Name))
			}
		}
		items := [][2]*ast.Term{
			{keyLanguage, ast.StringTerm(p.Language)},
			{keySource, ast.StringTerm(p.Source)},
			{keyCalls, ast.ArrayTerm(names...)},
		}
		for _, f := range []struct {
			key *ast.Term
			on  bool
		}{
			{keyDynamicCode, p.Dynamic}, {keyDecodes, p.Decodes}, {keyNetwork, p.Network},
			{keyReverseShell, p.ReverseShell}, {keyExecutesStdin, p.ExecutesStdin},
			{keyDynamicLookup, p.DynamicLookup}, {keyEnvDump, p.EnvDump},
			{keyPageSecrets, p.PageSecrets},
		} {
			if f.on {
				items = append(items, [2]*ast.Term{f.key, termTrue})
			}
		}
		obj := cmds[p.Command].Value.(ast.Object)
		obj.Insert(keyCode, ast.ObjectTerm(items...))
		dropCodePaths(obj, p.CodeArgs)
		if p.Dynamic {
			obj.Insert(keyDynamicCode, termTrue)
		}
	}
}

// dropCodePaths removes the path objects built from the arguments that
// hold code: print(open('x.pub').read()) names no file of its own.
func dropCodePaths(obj ast.Object, args []int) {
	t := obj.Get(keyPaths)
	if t == nil || len(args) == 0 {
		return
	}
	list, ok := t.Value.(*ast.Array)
	if !ok {
		return
	}
	var keep []*ast.Term
	list.Foreach(func(p *ast.Term) {
		if po, ok := p.Value.(ast.Object); ok {
			if n, ok := po.Get(keyArg).Value.(ast.Number); ok {
				if i, ok := n.Int(); ok && slices.Contains(args, i) {
					return
				}
			}
		}
		keep = append(keep, p)
	})
	obj.Insert(keyPaths, ast.ArrayTerm(keep...))
}
