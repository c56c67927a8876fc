// Package powershell reads PowerShell command lines into the POSIX shell
// commands they amount to, so that the shell analysis and every rule about
// those commands judge PowerShell too: Remove-Item -Recurse -Force P reads
// as rm -rf P, iwr URL | iex as curl URL | sh.
//
// It is a reader, not an interpreter: it splits a command line into
// pipelines of commands with their arguments (quotes, backtick escapes,
// separators, groups), maps cmdlets and their aliases onto the POSIX
// programs that do the same, and passes every other command through by its
// name. cmd.exe lines (cmd /c …), which Windows and PowerShell scripts
// hand on as often, are read the same way (TranslateCmd). All functions
// are pure and bounded by their input.
package powershell

import (
	"strings"
	"unicode/utf8"
)

// Word is one argument of a command.
type Word struct {
	// Text is the word after quote removal and escapes; for a group, the
	// text as written, parentheses included.
	Text string
	// Expand is set for a word whose text holds $ expansions: bare or
	// double-quoted.
	Expand bool
	// Group is set for an expression: (…), $(…), @(…), {…}, […]::… and
	// whatever is glued to it, as in (New-Object Net.WebClient).DownloadString('…').
	Group bool
	// Quoted is set when any part of the word was quoted.
	Quoted bool
	// Listed is set for a word after a comma: one more element of the
	// array the word before starts ('-c', 'x').
	Listed bool
}

// Command is one command of a pipeline.
type Command struct {
	Words     []Word
	Redirects []Redirect
	// Call is set when the command was written after the call operator
	// & or the dot-source operator.
	Call bool
}

// Redirect is an output redirection: > file, >> file, 2> file.
type Redirect struct {
	Op     string // ">" or ">>"
	Target string
}

// Pipeline is commands joined by |, and the operator that joins it to
// the pipeline before: "" first, ";", "&&", "||".
type Pipeline struct {
	Op       string
	Commands []Command
	// Background is set for a pipeline ended by & (a job).
	Background bool
}

// maxDepth bounds nested groups, scripts and encodings.
const maxDepth = 8

// Parse splits a PowerShell command line into its pipelines.
func Parse(src string) []Pipeline {
	r := reader{src: src}
	return r.pipelines()
}

type reader struct {
	src string
	pos int
}

func (r *reader) eof() bool { return r.pos >= len(r.src) }

func (r *reader) peek(k int) byte {
	if r.pos+k < len(r.src) {
		return r.src[r.pos+k]
	}
	return 0
}

// pipelines reads the whole input.
func (r *reader) pipelines() []Pipeline {
	var out []Pipeline
	cur := Pipeline{}
	cmd := Command{}
	listed := false
	flushCmd := func() {
		if len(cmd.Words) > 0 || len(cmd.Redirects) > 0 {
			cur.Commands = append(cur.Commands, cmd)
		}
		cmd = Command{}
	}
	flush := func(next string) {
		flushCmd()
		if len(cur.Commands) > 0 {
			out = append(out, cur)
		}
		cur = Pipeline{Op: next}
	}
	for !r.eof() {
		c := r.src[r.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			r.pos++
		case c == '`' && (r.peek(1) == '\n' || r.peek(1) == '\r'):
			r.pos += 2 // a line continues
		case c == '\n' || c == ';':
			r.pos++
			flush(";")
		case c == '#':
			r.skipLine()
		case c == '<' && r.peek(1) == '#':
			if end := strings.Index(r.src[r.pos+2:], "#>"); end >= 0 {
				r.pos += end + 4
			} else {
				r.pos = len(r.src)
			}
		case c == '|' && r.peek(1) == '|':
			r.pos += 2
			flush("||")
		case c == '|':
			r.pos++
			flushCmd()
		case c == '&' && r.peek(1) == '&':
			r.pos += 2
			flush("&&")
		case c == '&' && len(cmd.Words) == 0:
			r.pos++
			cmd.Call = true
		case c == '&':
			r.pos++
			cur.Background = true
			flush(";")
		case c == '.' && len(cmd.Words) == 0 && (r.peek(1) == ' ' || r.peek(1) == '\t'):
			r.pos++
			cmd.Call = true
		case c == ',':
			r.pos++ // an array's elements are separate arguments here
			listed = true
		case r.redirect(&cmd):
		default:
			if w, ok := r.word(); ok {
				w.Listed, listed = listed && len(cmd.Words) > 0, false
				cmd.Words = append(cmd.Words, w)
			} else {
				r.pos++
			}
		}
	}
	flush("")
	return out
}

func (r *reader) skipLine() {
	if i := strings.IndexByte(r.src[r.pos:], '\n'); i >= 0 {
		r.pos += i
	} else {
		r.pos = len(r.src)
	}
}

// redirect reads [n|*]>[>][&n] and its target; false when none starts here.
func (r *reader) redirect(cmd *Command) bool {
	i := r.pos
	if i < len(r.src) && (r.src[i] == '*' || r.src[i] >= '1' && r.src[i] <= '6') {
		i++
	}
	if i >= len(r.src) || r.src[i] != '>' {
		return false
	}
	fd := r.src[r.pos:i]
	i++
	op := ">"
	if i < len(r.src) && r.src[i] == '>' {
		op = ">>"
		i++
	}
	if i+1 < len(r.src) && r.src[i] == '&' && r.src[i+1] >= '1' && r.src[i+1] <= '6' {
		r.pos = i + 2 // 2>&1: no file
		return true
	}
	r.pos = i
	for !r.eof() && (r.src[r.pos] == ' ' || r.src[r.pos] == '\t') {
		r.pos++
	}
	w, ok := r.word()
	if ok && (fd == "" || fd == "1" || fd == "*") {
		cmd.Redirects = append(cmd.Redirects, Redirect{Op: op, Target: w.Text})
	}
	return true
}

// ends reports whether c ends a bare word.
func ends(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '|', '&', ',', '>':
		return true
	}
	return false
}

// word reads one argument: bare text, quoted strings and groups glued
// together.
func (r *reader) word() (Word, bool) {
	var b strings.Builder
	var w Word
	start := r.pos
	for !r.eof() && !ends(r.src[r.pos]) {
		c := r.src[r.pos]
		switch {
		case c == '\'':
			w.Quoted = true
			r.pos++
			for !r.eof() {
				if r.src[r.pos] == '\'' {
					if r.peek(1) == '\'' {
						b.WriteByte('\'')
						r.pos += 2
						continue
					}
					r.pos++
					break
				}
				b.WriteByte(r.src[r.pos])
				r.pos++
			}
		case c == '"':
			w.Quoted = true
			r.pos++
			r.double(&b, &w)
		case c == '`':
			r.pos++
			r.escaped(&b)
		case c == '(' || c == '{' || c == '[' || (c == '$' || c == '@') && (r.peek(1) == '(' || r.peek(1) == '{'):
			open := r.pos
			if c == '$' || c == '@' {
				r.pos++
			}
			r.balanced()
			text := r.src[open:r.pos]
			if c == '$' && text[1] == '{' {
				w.Expand = true // ${env:NAME}
			} else {
				w.Group = true
			}
			b.WriteString(text)
		case c == '$':
			w.Expand = true
			b.WriteByte(c)
			r.pos++
		case c == '#' && r.pos == start:
			return Word{}, false
		default:
			b.WriteByte(c)
			r.pos++
		}
	}
	if r.pos == start {
		return Word{}, false
	}
	w.Text = b.String()
	return w, true
}

// double reads the rest of a double-quoted string.
func (r *reader) double(b *strings.Builder, w *Word) {
	for !r.eof() {
		c := r.src[r.pos]
		switch {
		case c == '"' && r.peek(1) == '"':
			b.WriteByte('"')
			r.pos += 2
		case c == '"':
			r.pos++
			return
		case c == '`':
			r.pos++
			r.escaped(b)
		case c == '$' && r.peek(1) == '(':
			w.Expand = true
			open := r.pos
			r.pos++
			r.balanced()
			b.WriteString(r.src[open:r.pos])
		case c == '$':
			w.Expand = true
			b.WriteByte(c)
			r.pos++
		default:
			b.WriteByte(c)
			r.pos++
		}
	}
}

// balanced skips a bracketed group starting at r.pos, quotes and nested
// groups included, and stops after its closer (or at the end).
func (r *reader) balanced() {
	defer func() { r.pos = min(r.pos, len(r.src)) }()
	var stack []byte
	for !r.eof() {
		c := r.src[r.pos]
		switch c {
		case '(':
			stack = append(stack, ')')
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case ')', '}', ']':
			if len(stack) > 0 && stack[len(stack)-1] == c {
				stack = stack[:len(stack)-1]
			}
		case '\'':
			if end := strings.IndexByte(r.src[r.pos+1:], '\''); end >= 0 {
				r.pos += end + 1
			}
		case '"':
			r.pos++
			for !r.eof() && r.src[r.pos] != '"' {
				if r.src[r.pos] == '`' {
					r.pos++
				}
				r.pos++
			}
		case '`':
			r.pos++
		}
		r.pos++
		if len(stack) == 0 {
			return
		}
	}
}

// escaped writes the character after a backtick, resolved, and moves
// past it; a character of several bytes is taken whole.
func (r *reader) escaped(b *strings.Builder) {
	if r.eof() {
		return
	}
	_, n := utf8.DecodeRuneInString(r.src[r.pos:])
	if n == 1 {
		b.WriteString(escape(r.src[r.pos]))
	} else {
		b.WriteString(r.src[r.pos : r.pos+n])
	}
	r.pos += n
}

// escape resolves a backtick escape.
func escape(c byte) string {
	switch c {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case '0':
		return "\x00"
	case 'a', 'b', 'f', 'v':
		return ""
	}
	return string(c)
}
