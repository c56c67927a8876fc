package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// forLoop walks for NAME in ITEMS (and select): when the items are known,
// the body is walked once per distinct item with the variable set to it,
// as the shell runs it; otherwise once with the variable unknown, carrying
// the output of the substitutions in the items.
func (a *analyzer) forLoop(it *syntax.WordIter, body []*syntax.Stmt, sc scope) {
	name := it.Name.Value
	var items []string
	var sources []int
	known := true
	written := map[string]bool{} // items that stay as written when unknown
	if !it.InPos.IsValid() {
		// for NAME; do … iterates over "$@".
		items, known = a.params, a.paramsKnown
	} else {
		fs, in := a.words(it.Items, sc.parent, sc)
		sources = in
		for _, f := range fs {
			items = append(items, f.text)
			known = known && !f.dynamic
			if !f.subst {
				written[f.text] = true
			}
		}
	}
	if len(items) == 0 || (!known && !it.InPos.IsValid()) {
		a.vars[name] = variable{sources: sources}
		a.stmts(body, sc)
		return
	}
	items = distinct(items)
	if len(items) > maxItems {
		a.limit("a loop runs over more than %d items", maxItems)
		items = items[:maxItems]
	}
	for _, item := range items {
		if a.stopped() {
			return
		}
		if known {
			a.vars[name] = variable{value: item, known: true, sources: sources}
		} else {
			// Unknown items stay as written ($HOME, $(ls)), the way
			// unknown words of a command do.
			a.vars[name] = variable{sources: sources}
			if written[item] {
				a.vars[name] = variable{written: item, sources: sources}
			}
		}
		a.stmts(body, sc)
	}
}

func distinct(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := items[:0:0]
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// readLoop walks while read NAME…; do …; done <<< TEXT (or a here-document)
// once per line of a known text, with the variables set as read sets them.
// It reports false when the loop is not of that shape.
func (a *analyzer) readLoop(c *syntax.WhileClause, s *syntax.Stmt, sc scope) bool {
	if c.Until || len(c.Cond) != 1 {
		return false
	}
	call, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "read" {
		return false
	}
	text, known, ok := a.literalInput(s.Redirs, sc)
	if !ok {
		return false
	}
	var names []string
	array := ""
	for i := 1; i < len(call.Args); i++ {
		w := call.Args[i].Lit()
		switch {
		case w == "":
			return false
		case w == "-a" && i+1 < len(call.Args):
			array = call.Args[i+1].Lit()
			i++
		case w == "-d" || w == "-n" || w == "-N" || w == "-p" || w == "-t" || w == "-u":
			i++
		case strings.HasPrefix(w, "-"):
		default:
			names = append(names, w)
		}
	}
	if len(names) == 0 && array == "" {
		names = []string{"REPLY"}
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > maxItems {
		a.limit("a loop runs over more than %d items", maxItems)
		lines = lines[:maxItems]
	}
	for _, line := range lines {
		if a.stopped() {
			break
		}
		a.assignLine(names, array, line, known, nil)
		a.stmts(c.Do, sc)
	}
	return true
}

// literalInput returns the text of a here-string or here-document among
// a compound statement's redirections when it holds no substitution, so
// that reading it now creates no command.
func (a *analyzer) literalInput(redirs []*syntax.Redirect, sc scope) (text string, known, ok bool) {
	for _, r := range redirs {
		var node syntax.Node
		switch r.Op {
		case syntax.WordHdoc:
			node = r.Word
		case syntax.Hdoc, syntax.DashHdoc:
			node = r.Hdoc
		default:
			continue
		}
		if node == nil || hasSubst(node) {
			return "", false, false
		}
		if r.Op == syntax.WordHdoc {
			f, _ := a.word(r.Word, sc.parent, sc)
			return f.text, !f.dynamic, true
		}
		body, _ := a.heredoc(r, sc.parent, sc)
		return body, true, true
	}
	return "", false, false
}

func hasSubst(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			found = true
		}
		return !found
	})
	return found
}

// endless reports whether a while or until loop never ends by its
// condition (while true, while :, until false) and its body has no break,
// exit or return.
func endless(c *syntax.WhileClause) bool {
	if len(c.Cond) != 1 {
		return false
	}
	call, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	switch call.Args[0].Lit() {
	case "true", ":":
		if c.Until {
			return false
		}
	case "false":
		if !c.Until {
			return false
		}
	default:
		return false
	}
	leaves := false
	for _, s := range c.Do {
		syntax.Walk(s, func(n syntax.Node) bool {
			if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				switch call.Args[0].Lit() {
				case "break", "exit", "return", "kill", "wait":
					leaves = true
				}
			}
			return !leaves
		})
	}
	return !leaves
}

// sleepLoop reports whether a while loop's condition is only a sleep
// (while sleep 60; do …; done), which turns it on a timer for ever.
func sleepLoop(c *syntax.WhileClause) bool {
	if c.Until || len(c.Cond) != 1 {
		return false
	}
	call, ok := c.Cond[0].Cmd.(*syntax.CallExpr)
	return ok && len(call.Args) == 2 && call.Args[0].Lit() == "sleep"
}
