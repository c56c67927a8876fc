package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/internal/enrich"
	"github.com/ahp-opa/ahp-opa/internal/redact"
	shellpkg "github.com/ahp-opa/ahp-opa/internal/shell"
	"github.com/ahp-opa/ahp-opa/transport"
)

// eventOf returns the tool event in data: data itself, or the event of a
// hooks/intercept request.
func eventOf(data []byte) (map[string]any, error) {
	msg, perr := transport.Decode(data)
	if perr != nil {
		return nil, fmt.Errorf("input: %w", perr)
	}
	if _, ok := msg["jsonrpc"]; !ok {
		return msg, nil
	}
	params, _ := msg["params"].(map[string]any)
	event, ok := params["event"].(map[string]any)
	if !ok {
		return nil, errors.New("input: the request has no params.event object")
	}
	return event, nil
}

// printPolicyInput prints the input a policy sees for the event in data.
func printPolicyInput(w io.Writer, data []byte) error {
	event, err := eventOf(data)
	if err != nil {
		return err
	}
	ev, err := transport.EventOfMap(event)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	input := enrich.FullInput(&ev, enrich.Options{})
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(ast.MustJSON(input))
}

// explainDecision prints the decision rules that fired for the event in
// data, with their location. Rule values, reasons and error messages can
// quote the input, so the text is masked before it is printed.
func explainDecision(ctx context.Context, w io.Writer, eng *engine.Engine, data []byte) error {
	var buf bytes.Buffer
	err := writeExplanation(ctx, &buf, eng, data)
	if _, werr := io.WriteString(w, redact.Default().String(buf.String())); err == nil {
		err = werr
	}
	return err
}

// snapshotInput returns the active snapshot and the policy input built
// from the event (or intercept request) in data as serving builds it,
// with the parts of input.ahp computed for it.
func snapshotInput(ctx context.Context, eng *engine.Engine, data []byte) (*engine.Snapshot, ast.Value, enrich.Parts, error) {
	event, err := eventOf(data)
	if err != nil {
		return nil, nil, 0, err
	}
	snap := eng.Snapshot()
	if snap == nil {
		return nil, nil, 0, engine.ErrNotReady
	}
	ev, err := transport.EventOfMap(event)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("input: %w", err)
	}
	input, parts := eng.InputFor(ctx, snap, &ev)
	return snap, input, parts, nil
}

func writeExplanation(ctx context.Context, w io.Writer, eng *engine.Engine, data []byte) error {
	snap, input, parts, err := snapshotInput(ctx, eng, data)
	if err != nil {
		return err
	}
	d, fired, err := snap.Explain(ctx, input)
	if err != nil {
		return err
	}
	verdict := "no objection"
	if d.Denied() {
		verdict = fmt.Sprintf("deny (%d rule(s) matched; the first speaks)", len(d.Matches))
	}
	if d.Approvable() {
		verdict += "; approvable: a person may approve it"
	}
	fmt.Fprintf(w, "decision: %s, policy revision %s\n", verdict, d.Revision)
	fmt.Fprintf(w, "input.ahp computed: %s\n", partsNote(parts))
	writeEffects(w, input)
	writeProvenance(w, input)
	for _, e := range d.Errors {
		note := ""
		if e.Shadow {
			note = " [shadow: does not change the answer]"
		}
		fmt.Fprintf(w, "rule error: %s in %s: %s%s\n", e.Where(), e.Rule, e.Message, note)
	}
	for _, m := range d.Shadowed {
		fmt.Fprintf(w, "would deny (shadow): %s: %s\n", strings.TrimSpace(m.Package+" "+m.Code), m.Reason)
	}
	if len(fired) == 0 {
		fmt.Fprintln(w, "no decision rule fired")
		return nil
	}
	fmt.Fprintln(w, "rules fired:")
	for _, f := range fired {
		what := f.Code
		if what == "" {
			what = f.Value.String()
		}
		note := ""
		if f.Suppressed {
			note = " [suppressed by data.ahp_opa.config]"
		}
		if f.Shadowed {
			note = " [shadow: would deny, not answered]"
		}
		fmt.Fprintf(w, "  %s: %s %s%s\n", f.Location, f.Rule, what, note)
		if f.Title != "" {
			fmt.Fprintf(w, "      %s\n", f.Title)
		}
	}
	return nil
}

// partsNote says which parts of input.ahp were computed for the policy,
// and which were left out because no rule can read them.
func partsNote(parts enrich.Parts) string {
	if parts == enrich.All {
		return parts.String() + " (all: the policy can read each)"
	}
	return fmt.Sprintf("%s (what the policy can read; not computed: %s)", parts, enrich.All&^parts)
}

// withoutFlags returns the flags of fs but names: flags that steer a
// command and have no place in the configuration.
func withoutFlags(fs *pflag.FlagSet, names ...string) *pflag.FlagSet {
	out := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		for _, n := range names {
			if f.Name == n {
				return
			}
		}
		out.AddFlag(f)
	})
	return out
}

// traceDecision prints OPA's evaluation trace of the decision for the event
// in data, filtered by mode as opa eval --explain filters it.
func traceDecision(ctx context.Context, w io.Writer, eng *engine.Engine, data []byte, mode string) error {
	snap, input, _, err := snapshotInput(ctx, eng, data)
	if err != nil {
		return err
	}
	events, err := snap.Trace(ctx, input)
	switch mode {
	case "notes":
		events = lineage.Notes(events)
	case "fails":
		events = lineage.Fails(events)
	case "full":
		events = lineage.Full(events)
	case "debug":
		events = lineage.Debug(events)
	}
	// The trace quotes input values (commands, file contents): mask secrets
	// in it as every other output of eval is masked.
	var buf bytes.Buffer
	topdown.PrettyTraceWithLocation(&buf, events)
	if _, werr := io.WriteString(w, redact.Default().String(buf.String())); err == nil {
		err = werr
	}
	return err
}

// writeEffects lists input.ahp.effects: what the call does, and where each
// effect came from (the data row, the verb, the tool, and the workspace
// definitions followed to reach its command), so a surprising deny can be
// traced to the row and the script that made it.
func writeEffects(w io.Writer, input ast.Value) {
	obj, _ := input.(ast.Object)
	if obj == nil {
		return
	}
	ahp, _ := termAt(obj, enrich.InputKey).(ast.Object)
	arr, _ := termAt(ahp, "effects").(*ast.Array)
	switch {
	case arr == nil:
		return // the policy does not read them
	case arr.Len() == 0:
		// Said so that it does not read as "nothing happened" after a deny.
		fmt.Fprintln(w, "effects: none recognised in the effects table (rules may still judge the call itself)")
		return
	}
	shell, _ := termAt(ahp, "shell").(ast.Object)
	cmds, _ := termAt(shell, "commands").(*ast.Array)
	fmt.Fprintln(w, "effects:")
	arr.Foreach(func(t *ast.Term) {
		e, _ := t.Value.(ast.Object)
		src, _ := termAt(e, "source").(ast.Object)
		from := text(src, "kind")
		switch {
		case text(src, "row") != "":
			from += " row " + strconv.Quote(text(src, "row"))
		case text(src, "verb") != "":
			from += " " + strconv.Quote(text(src, "verb"))
		}
		line := fmt.Sprintf("  %s of %s by %s (from %s, confidence %s", text(e, "effect"), text(e, "target"), text(e, "program"), from, text(e, "confidence"))
		if b, ok := termAt(e, "approvable").(ast.Boolean); ok && bool(b) {
			line += ", approvable"
		}
		if local, ok := termAt(e, "local").(ast.Object); ok {
			line += ", local: " + text(local, "why")
		}
		if via := followedFrom(cmds, termAt(e, "command")); via != "" {
			line += ", via " + via
		}
		if n, ok := termAt(e, "command").(ast.Number); ok && cmds != nil {
			if i, ok := n.Int(); ok && i >= 0 && i < cmds.Len() {
				cmd, _ := cmds.Elem(i).Value.(ast.Object)
				if termAt(cmd, "provenance") != nil {
					line += ", text " + provenanceOf(cmd)
				}
				if text(cmd, "via") == shellpkg.ViaVariable {
					line += ", read after the variable prefix " + variablePrefix(cmds, cmd)
				}
			}
		}
		fmt.Fprintln(w, line+")")
	})
}

// followedFrom names the workspace definitions (Makefile#deploy,
// package.json#scripts.release) that lead to command i, outermost first,
// by walking its parents; "" when it was typed as it is.
func followedFrom(cmds *ast.Array, i ast.Value) string {
	n, ok := i.(ast.Number)
	if !ok || cmds == nil {
		return ""
	}
	idx, ok := n.Int()
	var chain []string
	// The parent chain is acyclic and bounded by the command count; the
	// bound guards against a malformed input all the same.
	for steps := 0; ok && idx >= 0 && idx < cmds.Len() && steps < cmds.Len(); steps++ {
		cmd, _ := cmds.Elem(idx).Value.(ast.Object)
		if res, isObj := termAt(cmd, "resolved").(ast.Object); isObj && text(res, "from") != "" {
			chain = append([]string{text(res, "from")}, chain...)
		}
		p, isNum := termAt(cmd, "parent").(ast.Number)
		if !isNum {
			break
		}
		idx, ok = p.Int()
	}
	return strings.Join(chain, " → ")
}

// variablePrefix is the program word of the command a variable-prefix
// command was read from ($SUDO in $SUDO rm -rf /x).
func variablePrefix(cmds *ast.Array, cmd ast.Object) string {
	if p, ok := termAt(cmd, "parent").(ast.Number); ok {
		if i, ok := p.Int(); ok && i >= 0 && i < cmds.Len() {
			parent, _ := cmds.Elem(i).Value.(ast.Object)
			if argv, _ := termAt(parent, "argv").(*ast.Array); argv != nil && argv.Len() > 0 {
				if s, ok := argv.Elem(0).Value.(ast.String); ok {
					return string(s)
				}
			}
		}
	}
	return "(unknown)"
}

func termAt(obj ast.Object, key string) ast.Value {
	if obj == nil {
		return nil
	}
	if t := obj.Get(ast.StringTerm(key)); t != nil {
		return t.Value
	}
	return nil
}

func text(obj ast.Object, key string) string {
	s, _ := termAt(obj, key).(ast.String)
	return string(s)
}

// provenanceOf says where a command's text came from: typed by the agent,
// or read from a definition of the repository.
func provenanceOf(cmd ast.Object) string {
	p, _ := termAt(cmd, "provenance").(ast.Object)
	if p == nil {
		return "typed by the agent"
	}
	return "read from the " + text(p, "kind") + " (" + text(p, "from") + ")"
}

// writeProvenance says where the text of the commands judged came from:
// how many the agent typed and, per definition followed, how many were
// read from the repository, which heuristics of style do not judge.
func writeProvenance(w io.Writer, input ast.Value) {
	obj, _ := input.(ast.Object)
	ahp, _ := termAt(obj, enrich.InputKey).(ast.Object)
	shell, _ := termAt(ahp, "shell").(ast.Object)
	cmds, _ := termAt(shell, "commands").(*ast.Array)
	if cmds == nil {
		return
	}
	typed := 0
	var order []string
	counts := map[string]int{}
	cmds.Foreach(func(t *ast.Term) {
		cmd, _ := t.Value.(ast.Object)
		p, _ := termAt(cmd, "provenance").(ast.Object)
		if p == nil {
			typed++
			return
		}
		key := text(p, "kind") + " " + text(p, "from")
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	})
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(w, "provenance: %d command(s) typed by the agent, judged in full\n", typed)
	for _, k := range order {
		kind, from, _ := strings.Cut(k, " ")
		fmt.Fprintf(w, "  %d command(s) read from the %s (%s): judged by their effects, not their style\n", counts[k], kind, from)
	}
}
