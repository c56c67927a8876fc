package enrich

import (
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Interned keys of input.ahp.effects.
var (
	keyEffects    = ast.StringTerm("effects")
	keyEffect     = ast.StringTerm("effect")
	keyProgram    = ast.StringTerm("program")
	keyRow        = ast.StringTerm("row")
	keyVerb       = ast.StringTerm("verb")
	keyConfidence = ast.StringTerm("confidence")
	keyLocal      = ast.StringTerm("local")
	keyWhy        = ast.StringTerm("why")
	keyAssumed    = ast.StringTerm("assumed")
	keyApprovable = ast.StringTerm("approvable")
	keyEffectIdx  = ast.StringTerm("effect_index")
)

// maxEffects bounds input.ahp.effects: a script of thousands of commands
// must not cost thousands of objects per decision.
const maxEffects = 256

// maxToolArgs bounds the input strings a tool row's args are matched on.
const maxToolArgs = 32

// commandWorkspace judges a command's operands against the workspace,
// from the directory the command runs in.
type commandWorkspace struct {
	pc  *pathContext
	dir string
}

func (w commandWorkspace) Inside(arg string) bool {
	pi := w.pc.resolveIn(arg, w.dir)
	return pi.inside && !pi.dynamic
}

func (w commandWorkspace) Outside(arg string) (string, bool) {
	if !pathCandidate(arg, false) {
		return "", false
	}
	pi := w.pc.resolveIn(arg, w.dir)
	if !pi.outside || scratchPath(pi.abs) {
		return "", false
	}
	return pi.abs, true
}

// scratchPath holds for devices and temporary directories: writing or
// deleting there is everyday work, not an effect on the user's files.
func scratchPath(p string) bool {
	for _, prefix := range []string{"/dev/", "/tmp/", "/var/tmp/", "/private/tmp/", "/private/var/folders/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return p == "/tmp" || p == "/dev/null"
}

// effects computes input.ahp.effects and its index by effect
// (input.ahp.effect_index): the effects of each analysed
// command (data rows, verbs, redirections outside the workspace), of the
// tool itself (MCP and agent tools in the table) and of a file tool's
// write outside the workspace.
func (en *enricher) effects(m *effects.Matcher, call *call) (list, index *ast.Term) {
	fam, toolName := call.family, call.tool
	var out []effects.Effect
	if a := en.analysis; a != nil {
		kubeContext := ""
		for i := range a.Commands {
			if len(out) >= maxEffects {
				break
			}
			c := &a.Commands[i]
			if ctx, ok := switchesKubeContext(c); ok {
				kubeContext = ctx
			} else if kubeContext != "" {
				// kubectl config use-context minikube && kubectl apply …:
				// the later command acts on the context chosen before it.
				c = withKubeContext(c, kubeContext)
			}
			ws := commandWorkspace{pc: en.pc, dir: en.commandDir(c)}
			n := len(out)
			out = m.Command(c, i, ws, out)
			out = targetVerbs(m, c, i, en.resolved[i], out)
			out = effects.OnProduction(c, i, out, n)
			for _, r := range c.Redirects {
				if !writeOps[r.Op] || r.Target == "" {
					continue
				}
				if abs, ok := ws.Outside(r.Target); ok {
					out = append(out, effects.Effect{
						Effect: effects.FSWriteOutside, Target: abs, Program: c.Name, Command: i,
						Source: effects.Source{Kind: "redirect", Row: r.Op}, Confidence: effects.High,
					})
				}
			}
		}
	}
	if fam == FamilyMCP {
		// The table's tools are MCP servers' (merge_pull_request); an
		// agent's own tool of the same name (Cursor's delete_file) is a
		// file tool with a family of its own.
		out = m.Tool(toolName, toolStrings(call.input), out)
		if !m.KnownTool(toolName) {
			// A tool nobody listed: the words of its name speak, as an
			// unknown CLI's subcommands do (drop_collection, deploy_site).
			n := len(out)
			out = m.ToolVerbs(toolName, out)
			for i := n; i < len(out); i++ {
				if out[i].Effect == effects.StoreDestroy && out[i].Confidence == effects.Low && emptyCondition(call.input) {
					// delete_many with filter {}: every record, like a
					// DELETE without WHERE.
					out[i].Confidence, out[i].Target = effects.Medium, "every record"
				}
			}
		}
	}
	if fam == FamilyFileWrite || fam == FamilyFileEdit {
		ws := commandWorkspace{pc: en.pc, dir: en.pc.cwd}
		for _, p := range call.paths {
			if abs, ok := ws.Outside(p); ok {
				out = append(out, effects.Effect{
					Effect: effects.FSWriteOutside, Target: abs, Program: toolName, Command: -1,
					Source: effects.Source{Kind: "tool", Row: toolName}, Confidence: effects.High,
				})
				// The agent's own file tool editing the user's
				// configuration changes every later session; a shell
				// redirect into such a file is how setup and CI scripts
				// configure a runner, and is left to the rules about
				// what the command writes.
				if userConfigPath(abs, en.pc.home) {
					out = append(out, userConfigEffect(abs, toolName, effects.Source{Kind: "tool", Row: toolName}))
				}
			}
		}
	}
	if len(out) > maxEffects {
		out = out[:maxEffects]
	}
	terms := make([]*ast.Term, len(out))
	for i := range out {
		terms[i] = effectTerm(&out[i])
	}
	return ast.ArrayTerm(terms...), effectIndex(out)
}

// switchesKubeContext reports the context a command makes current for the
// kubectl, helm and other cluster commands after it: kubectl config
// use-context NAME, kubectx NAME.
func switchesKubeContext(c *shell.Command) (string, bool) {
	args := c.Args()
	switch {
	case (c.Name == "kubectl" || c.Name == "oc") && len(args) == 3 && args[0] == "config" && args[1] == "use-context":
		return args[2], !c.Dynamic[len(c.Dynamic)-1]
	case c.Name == "kubectx" && len(args) == 1 && !strings.HasPrefix(args[0], "-"):
		return args[0], !c.Dynamic[len(c.Dynamic)-1]
	}
	return "", false
}

// withKubeContext is c with the context chosen earlier in its environment
// (KUBECONTEXT, which the table's cluster rows read), unless c names
// one itself.
func withKubeContext(c *shell.Command, ctx string) *shell.Command {
	for _, a := range c.Args() {
		if a == "--context" || a == "--kube-context" || strings.HasPrefix(a, "--context=") || strings.HasPrefix(a, "--kube-context=") {
			return c
		}
	}
	cc := *c
	cc.Env = append(slices.Clip(c.Env), shell.Assign{Name: "KUBECONTEXT", Value: ctx})
	return &cc
}

// conditionFields name the condition a store tool deletes by.
var conditionFields = []string{"filter", "query", "where", "selector", "match", "conditions"}

// emptyCondition reports whether a tool's input gives an empty condition
// object ({"filter": {}}), which matches every record.
func emptyCondition(input ast.Object) bool {
	for _, k := range conditionFields {
		if o, ok := field(input, k).(ast.Object); ok && o.Len() == 0 {
			return true
		}
	}
	return false
}

// userConfigEffect is the config.change of writing a user configuration
// file (userconfig.go): a change a person may approve.
func userConfigEffect(abs, program string, src effects.Source) effects.Effect {
	return effects.Effect{
		Effect: effects.ConfigChange, Target: "user configuration " + abs, Program: program, Command: -1,
		Source: src, Confidence: effects.High, Approvable: true,
	}
}

// effectIndex maps each effect present to the indices of its entries in
// input.ahp.effects: a rule that starts with
// input.ahp.effect_index["store.destroy"] is skipped by OPA's rule index
// when no call has that effect, which keeps the effect rules cheap on
// everyday calls. nil when there is no effect.
func effectIndex(out []effects.Effect) *ast.Term {
	if len(out) == 0 {
		return nil
	}
	index := map[string][]*ast.Term{}
	var names []string
	for i := range out {
		n := out[i].Effect
		if _, ok := index[n]; !ok {
			names = append(names, n)
		}
		index[n] = append(index[n], ast.InternedTerm(i))
	}
	items := make([][2]*ast.Term, len(names))
	for i, n := range names {
		items[i] = [2]*ast.Term{ast.StringTerm(n), ast.ArrayTerm(index[n]...)}
	}
	return ast.ObjectTerm(items...)
}

// commandDir is the directory a command runs in.
func (en *enricher) commandDir(c *shell.Command) string {
	if c.Dir != "" {
		if d := en.pc.resolve(c.Dir); isAbs(d.abs) {
			return d.abs
		}
	}
	return en.pc.cwd
}

// toolStrings are a tool input's string values, for the rows that match
// a tool's arguments (execute_sql with a DROP in it): the top level's and
// those one object down, where servers that take a request object keep
// them ({"params": {"sql": …}}).
func toolStrings(input ast.Object) []string {
	if input == nil {
		return nil
	}
	var out []string
	input.Foreach(func(_, v *ast.Term) {
		switch x := v.Value.(type) {
		case ast.String:
			if len(out) < maxToolArgs {
				out = append(out, string(x))
			}
		case ast.Object:
			x.Foreach(func(_, w *ast.Term) {
				if s, ok := w.Value.(ast.String); ok && len(out) < maxToolArgs {
					out = append(out, string(s))
				}
			})
		}
	})
	return out
}

func effectTerm(e *effects.Effect) *ast.Term {
	src := [][2]*ast.Term{{keyKind, ast.StringTerm(e.Source.Kind)}}
	if e.Source.Row != "" {
		src = append(src, [2]*ast.Term{keyRow, ast.StringTerm(e.Source.Row)})
	}
	if e.Source.Verb != "" {
		src = append(src, [2]*ast.Term{keyVerb, ast.StringTerm(e.Source.Verb)})
	}
	items := make([][2]*ast.Term, 0, 9)
	items = append(items,
		[2]*ast.Term{keyEffect, ast.StringTerm(e.Effect)},
		[2]*ast.Term{keyTarget, ast.StringTerm(e.Target)},
		[2]*ast.Term{keyProgram, ast.StringTerm(e.Program)},
		[2]*ast.Term{keyCommand, ast.InternedTerm(e.Command)},
		[2]*ast.Term{keySource, ast.ObjectTerm(src...)},
		[2]*ast.Term{keyConfidence, ast.StringTerm(e.Confidence)},
		[2]*ast.Term{keyApprovable, ast.BooleanTerm(e.Approvable)},
	)
	if e.Local != "" {
		local := ast.ObjectTerm([2]*ast.Term{keyWhy, ast.StringTerm(e.Local)})
		if e.LocalAssumed {
			local = ast.ObjectTerm([2]*ast.Term{keyWhy, ast.StringTerm(e.Local)}, [2]*ast.Term{keyAssumed, ast.BooleanTerm(true)})
		}
		items = append(items, [2]*ast.Term{keyLocal, local})
	}
	return ast.ObjectTerm(items...)
}
