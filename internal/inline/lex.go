package inline

import (
	"strconv"
	"strings"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tokName  tokKind = iota // identifiers, dotted: os.path.join, File::Path, $x->get
	tokStr                  // a string literal, value decoded
	tokShell                // a command string: `…` in perl, ruby, php; qx{…}, %x{…}
	tokPunct                // one operator or bracket
	tokNum
	tokWords // a word list: qw(…) in Perl, %w[…] in Ruby
)

// token is one lexical unit. For strings, text is the value with escapes
// resolved and dyn says whether it interpolates something unknown.
type token struct {
	kind tokKind
	text string
	dyn  bool
}

// unknownValue stands for an interpolated value the analysis cannot know.
// It is written as a shell parameter so that the shell analysis marks the
// word it lands in as dynamic.
const unknownValue = "${UNKNOWN}"

// varMark brackets the name of a variable interpolated in a string, until
// the scanner replaces it with the variable's value.
const varMark = "\x00"

// lexer splits source into tokens. It knows each language's strings and
// comments; everything else is names and punctuation. It never fails: text
// it cannot read becomes punctuation.
type lexer struct {
	lang *language
	src  string
	pos  int
	out  []token
	max  int
}

func lex(l *language, src string, maxTokens int) ([]token, bool) {
	lx := &lexer{lang: l, src: src, max: maxTokens, out: make([]token, 0, min(len(src)/3+8, maxTokens))}
	lx.run()
	return lx.out, len(lx.out) >= maxTokens
}

func (lx *lexer) emit(t token) bool {
	if len(lx.out) >= lx.max {
		return false
	}
	lx.out = append(lx.out, t)
	return true
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func (lx *lexer) run() {
	s := lx.src
	for lx.pos < len(s) {
		c := s[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.pos++
			continue
		case c == '\n':
			lx.pos++
			if !lx.emit(token{kind: tokPunct, text: "\n"}) {
				return
			}
			continue
		case lx.comment():
			continue
		}
		if t, ok := lx.str(); ok {
			if !lx.emit(t) {
				return
			}
			continue
		}
		switch {
		case isIdentStart(c) || (lx.lang.sigils && (c == '$' || c == '@' || c == '%') && lx.pos+1 < len(s) && isIdentStart(s[lx.pos+1])):
			if !lx.emit(token{kind: tokName, text: lx.name()}) {
				return
			}
		case c >= '0' && c <= '9':
			start := lx.pos
			for lx.pos < len(s) && (isIdent(s[lx.pos]) || s[lx.pos] == '.') {
				lx.pos++
			}
			if !lx.emit(token{kind: tokNum, text: s[start:lx.pos]}) {
				return
			}
		default:
			if !lx.emit(token{kind: tokPunct, text: lx.punct()}) {
				return
			}
		}
	}
}

// name reads an identifier with its qualifiers: a.b, A::B, $x->y.
func (lx *lexer) name() string {
	s := lx.src
	start := lx.pos
	if c := s[lx.pos]; c == '$' || c == '@' || c == '%' {
		lx.pos++
	}
	for {
		for lx.pos < len(s) && isIdent(s[lx.pos]) {
			lx.pos++
		}
		switch {
		case strings.HasPrefix(s[lx.pos:], "::") && lx.pos+2 < len(s) && isIdentStart(s[lx.pos+2]):
			lx.pos += 2
		case strings.HasPrefix(s[lx.pos:], "->") && lx.pos+2 < len(s) && isIdentStart(s[lx.pos+2]):
			lx.pos += 2
		case lx.pos+1 < len(s) && s[lx.pos] == '.' && isIdentStart(s[lx.pos+1]) && lx.lang.dots:
			lx.pos++
		default:
			return s[start:lx.pos]
		}
	}
}

var puncts = []string{"=>", "->", "==", "!=", "<=", ">=", "&&", "||", "**", "..", "::", "+=", ".="}

func (lx *lexer) punct() string {
	rest := lx.src[lx.pos:]
	for _, p := range puncts {
		if strings.HasPrefix(rest, p) {
			lx.pos += len(p)
			return p
		}
	}
	lx.pos++
	return rest[:1]
}

// comment skips a comment at pos, if one starts there.
func (lx *lexer) comment() bool {
	rest := lx.src[lx.pos:]
	for _, c := range lx.lang.comments {
		if !strings.HasPrefix(rest, c) {
			continue
		}
		if c == "/*" {
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				lx.pos = len(lx.src)
			} else {
				lx.pos += end + 4
			}
			return true
		}
		if c == "--" && strings.HasPrefix(rest, "--[[") {
			end := strings.Index(rest, "]]")
			if end < 0 {
				lx.pos = len(lx.src)
			} else {
				lx.pos += end + 2
			}
			return true
		}
		end := strings.IndexByte(rest, '\n')
		if end < 0 {
			lx.pos = len(lx.src)
		} else {
			lx.pos += end
		}
		return true
	}
	return false
}

// str reads a string literal at pos in the language's syntax.
func (lx *lexer) str() (token, bool) {
	s := lx.src
	rest := s[lx.pos:]
	l := lx.lang
	// Prefixed and quote-like forms first.
	if l.pyPrefixes {
		i := 0
		for i < len(rest) && i < 2 && strings.IndexByte("rRbBuUfF", rest[i]) >= 0 {
			i++
		}
		if i > 0 && i < len(rest) && (rest[i] == '\'' || rest[i] == '"') {
			prefix := strings.ToLower(rest[:i])
			lx.pos += i
			return lx.pyString(strings.Contains(prefix, "r"), strings.Contains(prefix, "f")), true
		}
	}
	if l.quoteLike != nil {
		for _, q := range l.quoteLike {
			if !strings.HasPrefix(rest, q.prefix) || len(rest) <= len(q.prefix) {
				continue
			}
			open := rest[len(q.prefix)]
			if isIdent(open) || open == ' ' || open == '\n' || open == '=' || open == ',' || open == ';' || open == ')' {
				continue
			}
			if q.prefix[0] != '%' && lx.pos > 0 && isIdent(s[lx.pos-1]) {
				continue
			}
			lx.pos += len(q.prefix)
			return lx.delimited(q.kind, q.interp), true
		}
	}
	if len(rest) == 0 {
		return token{}, false
	}
	switch c := rest[0]; {
	case c == '\'' && l.single:
		if l.pyPrefixes {
			return lx.pyString(false, false), true
		}
		return lx.quoted('\'', tokStr, l.singleEscapes, false), true
	case c == '"' && l.double:
		if l.pyPrefixes {
			return lx.pyString(false, false), true
		}
		return lx.quoted('"', tokStr, true, l.interp), true
	case c == '`' && l.backtick != 0:
		return lx.quoted('`', l.backtick, true, true), true
	case c == '[' && l.longBrackets:
		level := 0
		for 1+level < len(rest) && rest[1+level] == '=' {
			level++
		}
		if 1+level < len(rest) && rest[1+level] == '[' {
			closer := "]" + strings.Repeat("=", level) + "]"
			body := rest[2+level:]
			end := strings.Index(body, closer)
			if end < 0 {
				lx.pos = len(s)
				return token{kind: tokStr, text: body}, true
			}
			lx.pos += 2 + level + end + len(closer)
			return token{kind: tokStr, text: body[:end]}, true
		}
	}
	return token{}, false
}

// pyString reads a Python string whose quote is at pos: '…', "…", ”'…”',
// """…""".
func (lx *lexer) pyString(raw, format bool) token {
	s := lx.src
	q := s[lx.pos]
	triple := strings.HasPrefix(s[lx.pos:], strings.Repeat(string(q), 3))
	if triple {
		lx.pos += 3
		closer := strings.Repeat(string(q), 3)
		end := strings.Index(s[lx.pos:], closer)
		body := s[lx.pos:]
		if end >= 0 {
			body = body[:end]
			lx.pos += end + 3
		} else {
			lx.pos = len(s)
		}
		return lx.finish(body, tokStr, !raw, format, "{")
	}
	return lx.quoted(q, tokStr, !raw, format)
}

// quoted reads a string between two q quotes, with backslash escapes when
// escapes is set; interp marks interpolation.
func (lx *lexer) quoted(q byte, kind tokKind, escapes, interp bool) token {
	s := lx.src
	lx.pos++ // opening quote
	start := lx.pos
	for lx.pos < len(s) && s[lx.pos] != q {
		if s[lx.pos] == '\\' && lx.pos+1 < len(s) {
			lx.pos++
		} else if s[lx.pos] == '\n' && lx.lang.pyPrefixes {
			break // an unterminated Python string ends at the line
		}
		lx.pos++
	}
	body := s[start:min(lx.pos, len(s))]
	if lx.pos < len(s) && s[lx.pos] == q {
		lx.pos++
	}
	mark := ""
	if interp {
		mark = lx.lang.interpMark
	}
	return lx.finish(body, kind, escapes, interp, mark)
}

// delimited reads q{…}, qq(…), %x[…] and the like: the opening delimiter
// is at pos; brackets nest.
func (lx *lexer) delimited(kind tokKind, interp bool) token {
	s := lx.src
	open := s[lx.pos]
	closer := open
	switch open {
	case '(':
		closer = ')'
	case '{':
		closer = '}'
	case '[':
		closer = ']'
	case '<':
		closer = '>'
	}
	lx.pos++
	start := lx.pos
	depth := 0
	for lx.pos < len(s) {
		c := s[lx.pos]
		if c == '\\' {
			lx.pos += 2
			continue
		}
		if c == closer && depth == 0 {
			break
		}
		if open != closer {
			if c == open {
				depth++
			} else if c == closer {
				depth--
			}
		}
		lx.pos++
	}
	body := s[start:min(lx.pos, len(s))]
	if lx.pos < len(s) {
		lx.pos++
	}
	mark := ""
	if interp {
		mark = lx.lang.interpMark
	}
	return lx.finish(body, kind, interp, interp, mark)
}

// finish resolves escapes and marks interpolations of a string body.
func (lx *lexer) finish(body string, kind tokKind, escapes, interp bool, mark string) token {
	t := token{kind: kind}
	if !escapes && !interp {
		t.text = body
		return t
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && escapes && i+1 < len(body) {
			i++
			switch e := body[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'x':
				if i+2 < len(body) {
					if v, err := strconv.ParseUint(body[i+1:i+3], 16, 8); err == nil {
						b.WriteByte(byte(v))
						i += 2
						continue
					}
				}
				b.WriteByte(e)
			case '\n':
				// a line continuation
			default:
				b.WriteByte(e)
			}
			continue
		}
		if interp && mark != "" && strings.HasPrefix(body[i:], mark) {
			n, name, known := interpolation(body[i:], mark)
			if n > 0 {
				// A plain name is resolved by the scanner, which knows
				// the variables; anything else is unknown.
				if known {
					b.WriteString(varMark + name + varMark)
				} else {
					b.WriteString(unknownValue)
				}
				t.dyn = true
				i += n - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	t.text = b.String()
	return t
}

// interpolation measures an interpolation at the start of s: {expr} in
// Python f-strings, ${expr} in JavaScript templates, #{expr} in Ruby,
// $name in Perl and PHP. It returns its length and, when it is a plain
// name, that name.
func interpolation(s, mark string) (int, string, bool) {
	switch mark {
	case "{", "${", "#{":
		if strings.HasPrefix(s, "{{") && mark == "{" {
			return 0, "", false // an escaped brace
		}
		depth := 0
		for i := len(mark) - 1; i < len(s); i++ {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					inner := strings.TrimSpace(s[len(mark):i])
					return i + 1, inner, isPlainName(inner)
				}
			}
		}
		return 0, "", false
	case "$":
		i := 1
		if i < len(s) && s[i] == '{' {
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return 0, "", false
			}
			inner := s[2:end]
			return end + 1, "$" + inner, isPlainName(inner)
		}
		for i < len(s) && isIdent(s[i]) {
			i++
		}
		if i == 1 {
			return 0, "", false
		}
		// Perl's $ENV{HOME}, PHP's $_SERVER['HOME'].
		if rest := s[i:]; strings.HasPrefix(rest, "{HOME}") || strings.HasPrefix(rest, "{'HOME'}") || strings.HasPrefix(rest, "['HOME']") {
			end := strings.IndexAny(rest, "}]")
			return i + end + 1, homeVar, true
		}
		return i, s[:i], true
	}
	return 0, "", false
}

// homeVar names an interpolated home directory.
const homeVar = "HOME"

func isPlainName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}
