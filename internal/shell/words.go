package shell

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// field is one word of a command line after expansion.
type field struct {
	text    string
	dynamic bool // holds an expansion whose value is unknown
	subst   bool // holds a command or process substitution
}

// fieldBuilder assembles the fields a word expands to. Unquoted expansions
// whose value is known are split at blanks, as the shell does.
type fieldBuilder struct {
	fields  []field
	cur     strings.Builder
	open    bool // cur is a field, even if empty ("")
	dynamic bool
	subst   bool
	split   bool
	ifs     string // the characters expansions are split at
}

func (b *fieldBuilder) text(s string) {
	b.cur.WriteString(s)
	b.open = true
}

// expansion adds the value of an unquoted expansion.
func (b *fieldBuilder) expansion(s string, known bool) {
	if !b.split || !known {
		b.text(s)
		return
	}
	sep := func(r rune) bool { return strings.ContainsRune(b.ifs, r) }
	if b.ifs == "" {
		b.text(s) // IFS= disables splitting
		return
	}
	for i, piece := range strings.FieldsFunc(s, sep) {
		if i > 0 || (len(s) > 0 && sep(rune(s[0]))) {
			b.end()
		}
		b.text(piece)
	}
	if len(s) > 0 && sep(rune(s[len(s)-1])) {
		b.end()
	}
}

func (b *fieldBuilder) end() {
	if b.open {
		b.fields = append(b.fields, field{text: b.cur.String(), dynamic: b.dynamic, subst: b.subst})
	}
	b.cur.Reset()
	b.open = false
	b.dynamic, b.subst = false, false
}

// words expands command words into fields and returns them with the
// commands whose output they hold.
func (a *analyzer) words(ws []*syntax.Word, parent int, sc scope) ([]field, []int) {
	var out []field
	var inputs []int
	for _, w := range ws {
		if w == nil {
			continue
		}
		for _, parts := range a.braces(w) {
			b := fieldBuilder{split: true, ifs: a.ifs()}
			inputs = append(inputs, a.parts(&b, parts, parent, sc, false)...)
			b.end()
			out = append(out, b.fields...)
		}
	}
	return out, inputs
}

// word expands one word into a single field, without brace expansion or
// splitting: assignment values, redirection targets.
func (a *analyzer) word(w *syntax.Word, parent int, sc scope) (field, []int) {
	if w == nil {
		return field{}, nil
	}
	b := fieldBuilder{}
	in := a.parts(&b, w.Parts, parent, sc, false)
	return field{text: b.cur.String(), dynamic: b.dynamic, subst: b.subst}, in
}

// parts expands word parts into b. quoted is set inside double quotes.
func (a *analyzer) parts(b *fieldBuilder, parts []syntax.WordPart, parent int, sc scope, quoted bool) []int {
	var inputs []int
	for _, part := range parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if quoted {
				b.text(unescapeDouble(p.Value))
			} else {
				b.text(unescapeBare(p.Value))
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.text(ansiC(p.Value))
			} else {
				b.text(p.Value)
			}
		case *syntax.DblQuoted:
			b.open = true
			inputs = append(inputs, a.parts(b, p.Parts, parent, sc, true)...)
		case *syntax.ParamExp:
			e := a.paramValue(p, parent, sc)
			inputs = append(inputs, e.in...)
			for i, v := range e.vals {
				if i > 0 {
					switch {
					case quoted && e.fields:
						b.end() // "$@": each value is a field
						b.open = true
					case quoted:
						if ifs := a.ifs(); ifs != "" {
							b.text(ifs[:1]) // "$*" joins with IFS's first character
						}
					default:
						b.end()
					}
				}
				if !e.known {
					b.dynamic = true
				}
				if quoted {
					b.text(v)
				} else {
					b.expansion(v, e.known)
				}
			}
			if !e.known {
				b.dynamic = true
			}
		case *syntax.CmdSubst:
			if name, ok := makeVariable(p); ok {
				// $(SUDO) copied from a Makefile recipe: Make's variable,
				// empty unless set, not a program named SUDO.
				b.dynamic = true
				b.text("${" + name + "}")
				continue
			}
			created := a.subst(p.Stmts, sc.nested(ViaCommandSubst, parent), sc.src)
			inputs = append(inputs, created...)
			b.subst = true
			if out, ok := a.staticOutput(created); ok {
				if quoted {
					b.text(out)
				} else {
					b.expansion(out, true)
				}
			} else {
				b.dynamic = true
				b.text(source(sc.src, p))
			}
		case *syntax.ProcSubst:
			created := a.subst(p.Stmts, sc.nested(ViaProcessSubst, parent), sc.src)
			inputs = append(inputs, created...)
			if out, ok := a.staticOutput(created); ok {
				// source <(echo …) and bash <(echo …) run this text.
				a.setText(source(sc.src, p), out)
			}
			b.subst, b.dynamic = true, true
			b.text(source(sc.src, p))
		case *syntax.ArithmExp:
			inputs = append(inputs, a.substitutions(p, scope{depth: sc.depth, via: sc.via, parent: parent, src: sc.src})...)
			b.dynamic = true
			b.text(source(sc.src, p))
		default: // extended globs and anything newer
			b.text(source(sc.src, part))
		}
	}
	return inputs
}

// source returns the text of node in src, or "" when positions are unknown.
func source(src string, n syntax.Node) string {
	start, end := n.Pos(), n.End()
	if !start.IsValid() || !end.IsValid() || start.IsRecovered() || end.IsRecovered() {
		return ""
	}
	s, e := int(start.Offset()), int(end.Offset())
	if s < 0 || e > len(src) || s > e {
		return ""
	}
	return src[s:e]
}

// staticOutput returns what a substitution prints when it is only a
// literal echo or printf, possibly piped through base64 -d: $(echo rm)
// runs rm.
func (a *analyzer) staticOutput(created []int) (string, bool) {
	switch len(created) {
	case 1:
		text, ok := a.printedText(created[0])
		return strings.TrimRight(text, "\n"), ok
	case 2:
		text, ok := a.printedText(created[0])
		dec := &a.out.Commands[created[1]]
		if !ok || !isBase64Decode(dec) || !hasInput(a.inputs[created[1]], created[0]) {
			return "", false
		}
		out, ok := decodeBase64(text)
		return strings.TrimRight(out, "\n"), ok
	}
	return "", false
}

func hasInput(inputs []int, i int) bool {
	for _, j := range inputs {
		if j == i {
			return true
		}
	}
	return false
}

func isBase64Decode(c *Command) bool {
	if c.Name != "base64" {
		return false
	}
	for _, arg := range c.Args() {
		if arg == "-d" || arg == "--decode" || arg == "-D" {
			return true
		}
	}
	return false
}

func decodeBase64(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), "")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && utf8.Valid(b) {
			return string(b), true
		}
	}
	return "", false
}

// printedText returns what command i prints when it is an echo, printf
// or cat of literal words (Printed).
func (a *analyzer) printedText(i int) (string, bool) {
	c := &a.out.Commands[i]
	if slices.Contains(c.Dynamic, true) {
		return "", false
	}
	return Printed(c)
}

// Printed returns the text c prints when its own words say it: echo's and
// printf's arguments, a here-document or here-string given to cat. A word
// that expands when the command runs is taken as Args spells it, so the
// text a script appends to a file keeps its $VARIABLES. ok is false for
// any other command, and for a printf format it cannot render.
func Printed(c *Command) (string, bool) {
	args := c.Args()
	switch c.Name {
	case "echo":
		escapes, newline := false, true
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			for _, f := range args[0][1:] {
				switch f {
				case 'n':
					newline = false
				case 'e':
					escapes = true
				case 'E':
					escapes = false
				}
			}
			args = args[1:]
		}
		text := strings.Join(args, " ")
		if escapes {
			text = ansiC(text)
		}
		if newline {
			text += "\n"
		}
		return text, true
	case "printf":
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return "", false
		}
		return printf(args[0], args[1:])
	case "cat":
		// cat <<EOF … prints its here-document.
		if len(args) > 0 && args[0] != "-" {
			return "", false
		}
		for _, r := range c.Redirects {
			switch r.Op {
			case "<<", "<<-":
				return r.Body, true
			case "<<<":
				return r.Body + "\n", true
			}
		}
	}
	return "", false
}

// printf renders the %s, %b, %d, %i, %q and %% directives of a printf
// format, reusing the format while arguments remain as printf does; other
// directives give up. %d and %q write their argument as it is: right for
// the numbers and plain words a script prints.
func printf(format string, args []string) (string, bool) {
	var b strings.Builder
	format = ansiC(format)
	for {
		n := len(args)
		var ok bool
		if args, ok = printfOnce(&b, format, args); !ok {
			return "", false
		}
		if len(args) == 0 || len(args) == n || b.Len() > 1<<16 {
			return b.String(), true
		}
	}
}

func printfOnce(b *strings.Builder, format string, args []string) ([]string, bool) {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		if i+1 >= len(format) {
			return nil, false
		}
		i++
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 's', 'b', 'd', 'i', 'q':
			if len(args) > 0 {
				arg := args[0]
				if format[i] == 'b' {
					arg = ansiC(arg)
				}
				b.WriteString(arg)
				args = args[1:]
			}
		default:
			return nil, false
		}
	}
	return args, true
}

// unescapeBare removes the backslashes of an unquoted literal: \r is r, and
// a backslash-newline disappears.
func unescapeBare(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that double quotes honour: before
// $ ` " \ and newline.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the escapes of $'…' strings and of echo -e.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// braces applies brace expansion to a word: {rm,-rf,/} is three words. The
// result is a list of part sequences, one per word, bounded by MaxFields.
func (a *analyzer) braces(w *syntax.Word) [][]syntax.WordPart {
	if !syntax.SplitBraces(w) {
		return [][]syntax.WordPart{w.Parts}
	}
	out := a.expandParts(w.Parts)
	if len(out) == 0 {
		return [][]syntax.WordPart{w.Parts}
	}
	return out
}

func (a *analyzer) expandParts(parts []syntax.WordPart) [][]syntax.WordPart {
	acc := [][]syntax.WordPart{nil}
	for _, part := range parts {
		be, ok := part.(*syntax.BraceExp)
		if !ok {
			for i := range acc {
				acc[i] = append(acc[i], part)
			}
			continue
		}
		var alts [][]syntax.WordPart
		if be.Sequence {
			for _, s := range sequence(be, a.lim.MaxFields) {
				alts = append(alts, []syntax.WordPart{&syntax.Lit{Value: s}})
			}
		} else {
			for _, el := range be.Elems {
				alts = append(alts, a.expandParts(el.Parts)...)
			}
		}
		if len(alts) == 0 {
			alts = [][]syntax.WordPart{nil}
		}
		var next [][]syntax.WordPart
		for _, prefix := range acc {
			for _, alt := range alts {
				if len(next) >= a.lim.MaxFields {
					a.limit("a brace expansion makes more than %d words", a.lim.MaxFields)
					return next
				}
				seq := make([]syntax.WordPart, 0, len(prefix)+len(alt))
				seq = append(append(seq, prefix...), alt...)
				next = append(next, seq)
			}
		}
		acc = next
	}
	return acc
}

// sequence expands {a..e} and {1..10..2}.
func sequence(be *syntax.BraceExp, max int) []string {
	if len(be.Elems) < 2 {
		return nil
	}
	from, to := be.Elems[0].Lit(), be.Elems[1].Lit()
	step := 1
	if len(be.Elems) > 2 {
		if n, err := strconv.Atoi(be.Elems[2].Lit()); err == nil && n != 0 {
			step = max0(n)
		}
	}
	var out []string
	if x, err1 := strconv.Atoi(from); err1 == nil {
		y, err2 := strconv.Atoi(to)
		if err2 != nil {
			return nil
		}
		if x <= y {
			for i := x; i <= y && len(out) < max; i += step {
				out = append(out, strconv.Itoa(i))
			}
		} else {
			for i := x; i >= y && len(out) < max; i -= step {
				out = append(out, strconv.Itoa(i))
			}
		}
		return out
	}
	if len(from) == 1 && len(to) == 1 {
		x, y := int(from[0]), int(to[0])
		if x <= y {
			for i := x; i <= y && len(out) < max; i += step {
				out = append(out, string(rune(i)))
			}
		} else {
			for i := x; i >= y && len(out) < max; i -= step {
				out = append(out, string(rune(i)))
			}
		}
	}
	return out
}

func max0(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// makeVariable reports whether a command substitution is Make's variable
// syntax, $(NAME) with NAME an upper-case identifier and nothing else, and
// returns NAME. As shell it would run a program of that name, which no
// system has; commands copied from a recipe mean the variable, whose
// value is unknown here (empty unless the environment or make's command
// line sets it).
func makeVariable(p *syntax.CmdSubst) (string, bool) {
	if len(p.Stmts) != 1 || p.Backquotes {
		return "", false
	}
	st := p.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) != 1 {
		return "", false
	}
	w := call.Args[0]
	if len(w.Parts) != 1 {
		return "", false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || !upperIdent(lit.Value) {
		return "", false
	}
	return lit.Value, true
}

// upperIdent reports whether s is an upper-case identifier with at least
// one letter: SUDO, GO_BIN, CC2.
func upperIdent(s string) bool {
	letter := false
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			letter = true
		case r == '_' || i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return letter
}
