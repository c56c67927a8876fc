package inline

import (
	"regexp"
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// actKind is what an act does.
type actKind uint8

const (
	actShell actKind = iota + 1 // runs text as a shell command line
	actArgv                     // runs argv
	actRemoveAll
	actRemove
	actRead
	actWrite
	actAppend
	actCopy
	actMove
	actFetch
)

// act is one thing the code does that a rule may care about.
type act struct {
	kind actKind
	call string   // the call as written: os.system, FileUtils.rm_rf
	text string   // actShell: the command line
	argv []string // actArgv
	path string   // the file, the source of a copy, the URL of a fetch
	dest string   // where a copy, move or download goes
}

// facts are what a scan found.
type facts struct {
	acts          []act
	dynamic       bool // code or a command is computed at run time
	decodes       bool // base64 or hex is decoded
	socket        bool // a network connection is opened
	dup           bool // descriptors are tied to a socket or a terminal
	evals         bool // code is run from a value the analysis cannot see
	executesStdin bool // code read from standard input is run
	pipes         bool // a stream is piped into another (node's .pipe)
	wholeEnv      bool // the whole environment is used as one value
	shows         bool // a value is printed or serialised
	pageStore     bool // a web page's cookies or storage are read
	truncated     bool // a bound stopped the scan
}

// value is what an expression evaluates to: a string, parts of which may
// be unknown, or a list.
type value struct {
	s      string
	list   []value
	isList bool
	dyn    bool
}

var unknown = value{s: unknownValue, dyn: true}

// resolve replaces the variables interpolated in a string token with
// their values, or with unknownValue.
func (s *scanner) resolve(t token) value {
	if !strings.Contains(t.text, varMark) {
		return value{s: t.text, dyn: t.dyn}
	}
	var b strings.Builder
	parts := strings.Split(t.text, varMark)
	dyn := false
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		if p == homeVar {
			b.WriteString("~")
			continue
		}
		if v, ok := s.vars[p]; ok && !v.isList {
			b.WriteString(v.s)
			dyn = dyn || v.dyn
			continue
		}
		b.WriteString(unknownValue)
		dyn = true
	}
	return value{s: b.String(), dyn: dyn}
}

func (v value) flat() []value {
	if !v.isList {
		return []value{v}
	}
	var out []value
	for _, e := range v.list {
		out = append(out, e.flat()...)
	}
	return out
}

// fullyUnknown reports whether nothing of the value is known.
func (v value) fullyUnknown() bool {
	return !v.isList && strings.TrimSpace(strings.ReplaceAll(v.s, unknownValue, "")) == ""
}

// Bounds of one scan: tokens per program and nesting of eval'd literals.
const (
	maxTokens   = 1 << 16
	maxEvalNest = 3
	maxActs     = 256
	// maxSpan bounds how far one call's arguments are searched, so that
	// a long program costs linear time, not quadratic.
	maxSpan = 512
	// maxSteps bounds the tokens one program's scans visit in all;
	// past it the program is reported as not fully read.
	maxSteps = 1 << 21
	// maxExprDepth bounds the nesting of brackets an expression is
	// evaluated through.
	maxExprDepth = 32
)

// scanner finds the acts of one program.
type scanner struct {
	lang  *language
	toks  []token
	vars  map[string]value
	alias map[string]string
	f     *facts
	nest  int
	depth int // of the expression being evaluated
	steps int // tokens visited by argument searches
	// globs are the patterns listed so far (glob.glob('~/.ssh/*')): a
	// loop over their result reaches each file through a name the
	// analysis cannot follow, so such a name stands for them.
	globs []value
	// pending are removals and reads of names the analysis cannot follow,
	// seen before any pattern was listed ([os.remove(f) for f in
	// glob.glob(p)] names f first): they take the patterns listed later.
	pending []act
}

func scan(l *language, src string, f *facts, nest int) {
	if nest > maxEvalNest {
		f.dynamic = true
		return
	}
	s := &scanner{lang: l, vars: map[string]value{}, alias: map[string]string{}, f: f, nest: nest}
	var full bool
	s.toks, full = lex(l, src, maxTokens)
	f.truncated = f.truncated || full
	s.run()
	for _, a := range s.pending {
		for _, g := range s.globs {
			s.pathValue(a.kind, a.call, g)
		}
	}
}

func (s *scanner) add(a act) {
	if len(s.f.acts) < maxActs {
		s.f.acts = append(s.f.acts, a)
	}
}

// lookup finds the kind of a call by its full name, then by shorter
// suffixes: os.path.join, path.join, .join, join.
func (s *scanner) lookup(name string) (callKind, string) {
	if full, ok := s.alias[name]; ok {
		name = full
	} else if i := strings.IndexAny(name, ".:-"); i > 0 {
		if full, ok := s.alias[name[:i]]; ok {
			name = full + name[i:]
		}
	}
	for n := name; n != ""; {
		if k, ok := s.lang.calls[n]; ok {
			return k, name
		}
		i := strings.IndexAny(n[1:], ".:-")
		if i < 0 {
			return 0, name
		}
		i++
		// Try the suffix with its separator (.read_text, ->get), then
		// without it.
		if k, ok := s.lang.calls[n[i:]]; ok && (n[i] == '.' || n[i] == '-') {
			return k, name
		}
		for i < len(n) && (n[i] == '.' || n[i] == ':' || n[i] == '-' || n[i] == '>') {
			i++
		}
		n = n[i:]
	}
	return 0, name
}

func (s *scanner) isPunct(i int, p string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tokPunct && s.toks[i].text == p
}

// closing finds the index of the bracket that closes the one at i.
func (s *scanner) closing(i int) int {
	depth := 0
	for j := i; j < len(s.toks) && j < i+maxSpan; j++ {
		s.steps++
		if s.toks[j].kind != tokPunct {
			continue
		}
		switch s.toks[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return min(len(s.toks), i+maxSpan)
}

// splitArgs splits toks[from:to] at top-level commas.
func (s *scanner) splitArgs(from, to int) [][]token {
	var out [][]token
	depth := 0
	start := from
	for j := from; j < to && j < len(s.toks); j++ {
		t := s.toks[j]
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",", "=>":
			if depth == 0 && t.text == "," {
				out = append(out, trim(s.toks[start:j]))
				start = j + 1
			}
		}
	}
	if end := min(to, len(s.toks)); start < end {
		out = append(out, trim(s.toks[start:end]))
	}
	return out
}

func trim(ts []token) []token {
	for len(ts) > 0 && ts[0].kind == tokPunct && ts[0].text == "\n" {
		ts = ts[1:]
	}
	for len(ts) > 0 && ts[len(ts)-1].kind == tokPunct && ts[len(ts)-1].text == "\n" {
		ts = ts[:len(ts)-1]
	}
	return ts
}

// bareEnd finds where the arguments of a call without parentheses end.
func (s *scanner) bareEnd(from int) int {
	depth := 0
	for j := from; j < len(s.toks) && j < from+maxSpan; j++ {
		s.steps++
		t := s.toks[j]
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth == 0 {
				return j
			}
			depth--
		case ";", "\n":
			if depth == 0 {
				return j
			}
		}
	}
	return min(len(s.toks), from+maxSpan)
}

// keyword reports whether an argument is name=value or name: value, and
// returns the name and the value's tokens.
func keyword(arg []token) (string, []token, bool) {
	if len(arg) >= 2 && arg[0].kind == tokName && arg[1].kind == tokPunct && (arg[1].text == "=" || arg[1].text == ":") {
		return arg[0].text, arg[2:], true
	}
	return "", nil, false
}

func (s *scanner) run() {
	for i := 0; i < len(s.toks); i++ {
		if s.steps > maxSteps {
			s.f.truncated = true
			return
		}
		t := s.toks[i]
		switch t.kind {
		case tokShell:
			s.shell("`", s.resolve(t))
		case tokStr:
			s.awkPipe(i)
			if s.isPunct(i-1, "$") && s.lang == javascript {
				// zx and Bun: $`rm -rf ~` runs a command line.
				s.shell("$``", s.resolve(t))
			}
		case tokName:
			s.envUse(i)
			i = s.name(i)
		}
	}
}

// envUse notes a name that stands for the whole environment (not one
// variable of it: os.environ['HOME'], getenv('HOME')) and a call that
// shows a value.
func (s *scanner) envUse(i int) {
	t := s.toks[i]
	if s.lang.shows[t.text] {
		s.f.shows = true
	}
	for _, store := range s.lang.pageStores {
		if t.text == store || strings.HasPrefix(t.text, store+".") {
			s.f.pageStore = true
		}
	}
	if !s.lang.wholeEnv[t.text] || s.isPunct(i+1, "[") || s.isPunct(i+1, "{") {
		return
	}
	if t.text == "getenv" && !(s.isPunct(i+1, "(") && s.isPunct(i+2, ")")) {
		return // getenv("HOME") reads one variable; getenv() all of them
	}
	if i >= 2 && s.isPunct(i-1, "(") && namesOnly[s.toks[i-2].text] {
		return // len(os.environ), Object.keys(process.env): names or a count
	}
	if s.childEnv(i) {
		return
	}
	if s.membership(i) {
		return // 'OPENAI_API_KEY' in os.environ: whether a name is set
	}
	s.f.wholeEnv = true
}

// childEnv reports whether the whole environment at i is handed on as a
// child process's environment, which copies it and shows nothing:
// {env: process.env}, env=os.environ, and a spread into the object given
// as env ({env: {...process.env, X: "1"}}).
func (s *scanner) childEnv(i int) bool {
	envKey := func(j int) bool { // toks[j] is env's : or =
		return j >= 1 && (s.isPunct(j, ":") || s.isPunct(j, "=")) && s.toks[j-1].text == "env"
	}
	if envKey(i - 1) {
		return true
	}
	if !(s.isPunct(i-1, ".") && s.isPunct(i-2, "..")) {
		return false
	}
	// Find the brace the spread is in, within a few entries.
	depth := 0
	for j := i - 3; j >= 0 && j > i-64; j-- {
		switch {
		case s.isPunct(j, "}") || s.isPunct(j, ")") || s.isPunct(j, "]"):
			depth++
		case s.isPunct(j, "(") || s.isPunct(j, "["):
			if depth == 0 {
				return false
			}
			depth--
		case s.isPunct(j, "{"):
			if depth == 0 {
				return envKey(j - 1)
			}
			depth--
		}
	}
	return false
}

// membership reports whether the name at i is the right side of a
// membership test of a literal ('KEY' in os.environ, "KEY" not in
// process.env): it yields true or false, no value. A loop (for k in
// os.environ) has a name before in, not a literal.
func (s *scanner) membership(i int) bool {
	j := i - 1
	if j < 1 || s.toks[j].kind != tokName || s.toks[j].text != "in" {
		return false
	}
	j--
	if s.toks[j].kind == tokName && s.toks[j].text == "not" {
		j--
	}
	return j >= 0 && s.toks[j].kind == tokStr
}

// envRef is the value of one environment variable read by name: the
// shell's $NAME, so that a command line or URL built from it says which
// variable it carries (curl "https://x.example/?$AWS_SECRET_ACCESS_KEY").
func envRef(name string) (value, bool) {
	if !envName.MatchString(name) {
		return value{}, false
	}
	return value{s: "${" + name + "}"}, true
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// namesOnly are calls that keep only the names or the number of a
// mapping's entries.
var namesOnly = map[string]bool{"len": true, "list": true, "sorted": true, "Object.keys": true, "count": true, "sizeof": true, "array_keys": true}

// awkPipe reads awk's "cmd" | getline and print … | "cmd".
func (s *scanner) awkPipe(i int) {
	if s.lang != awk {
		return
	}
	v := s.resolve(s.toks[i])
	if s.isPunct(i+1, "|") && i+2 < len(s.toks) && s.toks[i+2].text == "getline" {
		s.shell("getline", v)
	}
	if !s.isPunct(i-1, "|") {
		return
	}
	s.shell("print |", v)
	// print "rm -rf ~" | "sh": what is printed is the shell's script.
	if fields := strings.Fields(v.s); len(fields) == 1 && shell.IsShell(shell.Normalize(fields[0])) {
		for j := i - 2; j >= 0; j-- {
			if t := s.toks[j]; t.kind == tokName && (t.text == "print" || t.text == "printf") {
				s.shell("print |", s.eval(s.toks[j+1:i-1]))
				break
			}
			if t := s.toks[j]; t.kind == tokPunct && (t.text == ";" || t.text == "{" || t.text == "\n") {
				break
			}
		}
	}
}

// name handles a name at i and returns the index the scan goes on from.
func (s *scanner) name(i int) int {
	t := s.toks[i]
	switch {
	case t.text == "import" || t.text == "from":
		s.pyImport(i)
		return i
	case s.isPunct(i+1, "=") && !s.isPunct(i+2, "="):
		s.assign(i)
		return i + 1
	}
	if s.isPunct(i-1, ".") {
		if k, ok := s.lang.calls["."+t.text]; ok {
			s.methodAfter(i-1, "."+t.text, k)
			return i
		}
	}
	kind, full := s.lookup(t.text)
	if kind == 0 {
		return i
	}
	if s.method(i, kind) {
		return i
	}
	if s.lang == applescript && !(i >= 2 && s.toks[i-1].text == "shell" && s.toks[i-2].text == "do") {
		return i
	}
	var args [][]token
	var raw []token
	switch {
	case s.isPunct(i+1, "("):
		end := s.closing(i + 1)
		args = s.splitArgs(i+2, end)
		raw = s.toks[i+2 : min(end, len(s.toks))]
	case i+1 < len(s.toks) && s.startsArgs(s.toks[i+1]):
		end := s.bareEnd(i + 1)
		args = s.splitArgs(i+1, end)
		raw = s.toks[i+1 : end]
	default:
		switch kind {
		case kSocket:
			if s.lang != perl {
				s.f.socket = true // new net.Socket, socket.socket without arguments
			}
		case kEval:
			if s.isPunct(i+1, ")") || s.isPunct(i+1, ",") {
				s.f.evals, s.f.dynamic = true, true // .then(eval)
			}
		}
		return i
	}
	s.call(kind, full, args, raw)
	return i
}

// startsArgs reports whether a call without parentheses has arguments
// starting at t (system "ls", FileUtils.rm_rf "/tmp/x", os.execute "ls").
func (s *scanner) startsArgs(t token) bool {
	if !s.lang.bareCalls && s.lang != applescript {
		return false
	}
	switch t.kind {
	case tokStr, tokWords, tokShell:
		return true
	case tokName:
		return s.lang != lua && s.lang != applescript
	case tokPunct:
		return t.text == "[" && s.lang == ruby
	}
	return false
}

// pyImport records aliases: import subprocess as sp; from os import system.
func (s *scanner) pyImport(i int) {
	if s.lang != python {
		return
	}
	end := s.bareEnd(i)
	ts := s.toks[i:end]
	if ts[0].text == "import" {
		for _, part := range s.splitArgs(i+1, end) {
			if len(part) == 3 && part[1].text == "as" {
				s.alias[part[2].text] = part[0].text
			}
		}
		return
	}
	if len(ts) < 4 || ts[2].text != "import" {
		return
	}
	mod := ts[1].text
	for _, part := range s.splitArgs(i+3, end) {
		part = stripParens(part)
		switch {
		case len(part) == 1 && part[0].kind == tokName:
			s.alias[part[0].text] = mod + "." + part[0].text
		case len(part) == 3 && part[1].text == "as":
			s.alias[part[2].text] = mod + "." + part[0].text
		}
	}
}

func stripParens(ts []token) []token {
	for len(ts) > 0 && ts[0].kind == tokPunct && (ts[0].text == "(" || ts[0].text == ")") {
		ts = ts[1:]
	}
	for len(ts) > 0 && ts[len(ts)-1].kind == tokPunct && (ts[len(ts)-1].text == "(" || ts[len(ts)-1].text == ")") {
		ts = ts[:len(ts)-1]
	}
	return ts
}

// assign records name = value when the value is partly known, and
// x = require('child_process') as an alias.
func (s *scanner) assign(i int) {
	end := s.bareEnd(i + 2)
	rhs := s.toks[i+2 : end]
	name := s.toks[i].text
	if len(rhs) >= 4 && rhs[0].text == "require" && rhs[2].kind == tokStr {
		s.alias[name] = rhs[2].text
		return
	}
	if len(rhs) == 1 && rhs[0].kind == tokName {
		if _, ok := s.lang.calls[rhs[0].text]; ok {
			s.alias[name] = rhs[0].text // run = os.system
			return
		}
	}
	v := s.eval(rhs)
	if !v.fullyUnknown() || v.isList {
		s.vars[name] = v
	} else {
		delete(s.vars, name)
	}
}

// eval evaluates an expression of literals, known variables, path joins
// and concatenation. What it cannot follow becomes unknown.
func (s *scanner) eval(ts []token) value {
	ts = trim(ts)
	if len(ts) == 0 || s.depth >= maxExprDepth {
		return unknown
	}
	s.depth++
	defer func() { s.depth-- }()
	var out value
	op := ""
	for first := true; len(ts) > 0; first = false {
		v, n := s.term(ts)
		ts = ts[n:]
		switch {
		case first:
			out = v
		case op == "/":
			out = join(out, v)
		default:
			out = concat(out, v)
		}
		if len(ts) == 0 {
			break
		}
		next := ts[0]
		switch {
		case next.kind == tokPunct && s.lang.concat[next.text]:
			op = "+"
			ts = ts[1:]
		case next.kind == tokPunct && next.text == "/" && s.lang == python:
			op = "/" // pathlib: Path.home() / ".ssh"
			ts = ts[1:]
		case s.lang.juxtapose && (next.kind == tokStr || next.kind == tokName):
			op = "+"
		default:
			return concat(out, unknown)
		}
	}
	return out
}

func concat(a, b value) value {
	if a.isList || b.isList {
		return unknown
	}
	if a.fullyUnknown() && b.fullyUnknown() {
		return unknown
	}
	return value{s: a.s + b.s, dyn: a.dyn || b.dyn}
}

func join(parts ...value) value {
	var out value
	for i, p := range parts {
		if p.isList {
			return unknown
		}
		switch {
		case i == 0:
			out = p
		case strings.HasPrefix(p.s, "/"):
			out = p // an absolute part starts over
		case out.fullyUnknown() && (p.s == ".." || strings.HasPrefix(p.s, "../")):
			// join(unknown, '../..'): the parent of a place nobody knows,
			// not a path relative to where the program runs.
			out = unknown
		case strings.HasSuffix(out.s, "/"):
			out = value{s: out.s + p.s, dyn: out.dyn || p.dyn}
		default:
			out = value{s: out.s + "/" + p.s, dyn: out.dyn || p.dyn}
		}
	}
	return out
}

// term evaluates one operand at the start of ts and returns how many
// tokens it used.
func (s *scanner) term(ts []token) (value, int) {
	t := ts[0]
	switch t.kind {
	case tokStr:
		return s.postfix(s.resolve(t), ts, 1)
	case tokWords:
		var list []value
		for _, w := range strings.Fields(t.text) {
			list = append(list, value{s: w})
		}
		return value{list: list, isList: true}, 1
	case tokPunct:
		if t.text == "[" || t.text == "(" || (t.text == "{" && s.lang == lua) {
			end := s.matching(ts, 0)
			parts := s.splitTop(ts[1:min(end, len(ts))])
			if t.text == "(" && len(parts) == 1 {
				return s.postfix(s.eval(parts[0]), ts, min(end+1, len(ts)))
			}
			if t.text == "(" && s.lang != perl && s.lang != python {
				return unknown, min(end+1, len(ts))
			}
			list := make([]value, 0, len(parts))
			for _, p := range parts {
				if len(p) > 0 {
					list = append(list, s.eval(p))
				}
			}
			return value{list: list, isList: true}, min(end+1, len(ts))
		}
	case tokName:
		return s.nameTerm(ts)
	}
	return unknown, 1
}

// nameTerm evaluates a variable, a home directory, or a call that builds
// a path.
func (s *scanner) nameTerm(ts []token) (value, int) {
	t := ts[0]
	if v, ok := s.vars[t.text]; ok {
		return s.postfix(v, ts, 1)
	}
	// The environment's HOME: $ENV{HOME}, os.environ['HOME'], ENV['HOME'].
	if len(ts) >= 4 && (strings.HasSuffix(t.text, "ENV") || strings.HasSuffix(t.text, "environ") || strings.HasSuffix(t.text, "_SERVER")) &&
		ts[1].kind == tokPunct && (ts[1].text == "[" || ts[1].text == "{") {
		end := s.matching(ts, 1)
		if end == 3 && (ts[2].text == "HOME" || ts[2].text == "USERPROFILE") {
			return s.postfix(value{s: "~"}, ts, 4)
		}
		if end == 3 && ts[2].kind == tokStr {
			if v, ok := envRef(ts[2].text); ok {
				return s.postfix(v, ts, 4)
			}
		}
	}
	kind, _ := s.lookup(t.text)
	if kind == kEnv && strings.HasSuffix(t.text, "HOME") {
		return value{s: "~"}, 1
	}
	// Node's, Bun's and Vite's spellings of one environment.
	for _, prefix := range []string{"process.env.", "Bun.env.", "import.meta.env."} {
		if name, ok := strings.CutPrefix(t.text, prefix); ok && s.lang == javascript {
			if v, ok := envRef(name); ok {
				return s.postfix(v, ts, 1)
			}
		}
	}
	if kind == kGlob && len(ts) >= 2 && ts[1].kind == tokStr {
		return s.globbed(s.resolve(ts[1])), 2 // Perl's glob "~/.ssh/*"
	}
	if len(ts) < 2 || ts[1].kind != tokPunct || ts[1].text != "(" {
		if kind == kHome {
			return s.postfix(value{s: "~"}, ts, 1) // Dir.home
		}
		return unknown, 1
	}
	end := s.matching(ts, 1)
	args := s.splitTop(ts[2:end])
	n := min(end+1, len(ts))
	var v value
	switch kind {
	case kHome:
		v = value{s: "~"}
	case kJoin:
		vals := make([]value, 0, len(args))
		for _, a := range args {
			if _, _, ok := keyword(a); !ok && len(a) > 0 {
				vals = append(vals, s.eval(a))
			}
		}
		if len(vals) == 0 {
			v = value{s: "."}
		} else {
			v = join(vals...)
		}
	case kSame:
		if len(args) == 0 {
			return unknown, n
		}
		v = s.eval(args[0])
	case kGlob:
		pos := positional(args)
		if len(pos) == 0 {
			return unknown, n
		}
		v = s.globbed(s.eval(pos[0]))
	case kEnv:
		switch {
		case len(args) > 0 && len(args[0]) == 1 && (args[0][0].text == "HOME" || args[0][0].text == "USERPROFILE"):
			v = value{s: "~"}
		case len(args) > 0 && len(args[0]) == 1 && args[0][0].kind == tokStr:
			var ok bool
			if v, ok = envRef(args[0][0].text); !ok {
				v = unknown
			}
		default:
			v = unknown
		}
	case kList:
		list := make([]value, 0, len(args))
		for _, a := range args {
			if len(a) > 0 {
				list = append(list, s.eval(a))
			}
		}
		return value{list: list, isList: true}, n
	default:
		// require('os'), a module or object: its methods may still
		// build a path (require('os').homedir()).
		return s.postfix(unknown, ts, n)
	}
	return s.postfix(v, ts, n)
}

// postfix follows method calls on a path: Path(p).expanduser(),
// Path.home().joinpath('.ssh'), and acts on it: .read_text().
func (s *scanner) postfix(v value, ts []token, n int) (value, int) {
	for n+2 < len(ts) && ts[n].kind == tokPunct && ts[n].text == "." && ts[n+1].kind == tokName && ts[n+2].kind == tokPunct && ts[n+2].text == "(" {
		method := "." + ts[n+1].text
		kind, ok := s.lang.calls[method]
		if !ok {
			// A module function: require('os').homedir(),
			// require('path').join(a, b).
			kind, ok = s.lang.calls[ts[n+1].text]
			if !ok || (kind != kHome && kind != kJoin && kind != kSame) {
				return unknown, n
			}
			end := s.matching(ts, n+2)
			args := positional(s.splitTop(ts[n+3 : end]))
			n = min(end+1, len(ts))
			switch {
			case kind == kHome:
				v = value{s: "~"}
			case len(args) == 0:
				v = unknown
			case kind == kSame:
				v = s.eval(args[0])
			default:
				v = join(s.values(args)...)
			}
			continue
		}
		end := s.matching(ts, n+2)
		args := s.splitTop(ts[n+3 : end])
		n = min(end+1, len(ts))
		switch kind {
		case kJoin:
			parts := []value{v}
			for _, a := range args {
				parts = append(parts, s.eval(a))
			}
			v = join(parts...)
		case kSame:
		case kGlob: // Path.home().glob('.ssh/*'), .rglob('*.env')
			pos := positional(args)
			if len(pos) == 0 {
				return unknown, n
			}
			pattern := s.eval(pos[0])
			if method == ".rglob" {
				pattern = join(value{s: "**"}, pattern)
			}
			v = s.globbed(join(v, pattern))
		default:
			s.pathAct(kind, method, v)
			return unknown, n
		}
	}
	return v, n
}

// matching returns the index of the bracket closing ts[i], or len(ts)-1
// ... clamped so that slicing stays in range.
func (s *scanner) matching(ts []token, i int) int {
	depth := 0
	for j := i; j < len(ts) && j < i+maxSpan; j++ {
		s.steps++
		if ts[j].kind != tokPunct {
			continue
		}
		switch ts[j].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return min(len(ts), i+maxSpan)
}

// splitTop splits tokens at top-level commas.
func (s *scanner) splitTop(ts []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	s.steps += len(ts)
	for j, t := range ts {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, trim(ts[start:j]))
				start = j + 1
			}
		}
	}
	if start < len(ts) {
		out = append(out, trim(ts[start:]))
	}
	return out
}

// positional returns the arguments that are not name=value or options
// objects.
func positional(args [][]token) [][]token {
	out := make([][]token, 0, len(args))
	for _, a := range args {
		if len(a) == 0 {
			continue
		}
		if _, _, ok := keyword(a); ok {
			continue
		}
		if a[0].kind == tokPunct && a[0].text == "{" && len(a) > 1 && !(len(a) > 2 && a[1].kind == tokStr && a[2].text == "=>") {
			if _, _, ok := keyword(a[1:]); ok {
				continue // { recursive: true }
			}
		}
		out = append(out, a)
	}
	return out
}

func mentions(raw []token, words ...string) bool {
	for _, t := range raw {
		for _, w := range words {
			if strings.Contains(strings.ToLower(t.text), w) {
				return true
			}
		}
	}
	return false
}

// call records what a call does.
func (s *scanner) call(kind callKind, name string, args [][]token, raw []token) {
	pos := positional(args)
	arg := func(i int) value {
		if i < len(pos) {
			return s.eval(pos[i])
		}
		return unknown
	}
	switch kind {
	case kShell:
		if len(pos) == 0 {
			return
		}
		s.shell(name, arg(0))
	case kProcess:
		s.process(name, pos)
		if strings.Contains(strings.ToLower(name), "pty") {
			s.f.dup = true
		}
	case kRemove, kRemoveAll:
		k := actRemove
		if kind == kRemoveAll || mentions(raw, "recursive", "-r") {
			k = actRemoveAll
		}
		for _, p := range s.values(pos) {
			s.pathValue(k, name, s.orGlobbed(k, name, p))
		}
	case kRead, kWrite, kAppend:
		if len(pos) == 0 {
			return
		}
		v := arg(0)
		if kind == kRead {
			v = s.orGlobbed(actRead, name, v)
		}
		s.pathAct(kind, name, v)
	case kWriteLast:
		for _, a := range args {
			if k, v, ok := keyword(a); ok && (k == "file" || k == "con") {
				s.pathAct(kWrite, name, s.eval(v))
				return
			}
		}
		if len(pos) >= 2 {
			s.pathAct(kWrite, name, arg(len(pos)-1))
		}
	case kOpen:
		s.open(name, pos, args)
	case kCopy, kMove:
		if len(pos) < 2 {
			return
		}
		k := actCopy
		if kind == kMove {
			k = actMove
		}
		src, dst := arg(0), arg(1)
		if !src.fullyUnknown() || !dst.fullyUnknown() {
			s.add(act{kind: k, call: name, path: src.s, dest: dst.s})
		}
	case kFetch:
		s.fetch(name, pos, args)
	case kEval:
		if len(pos) == 0 {
			return
		}
		v := arg(0)
		if !v.fullyUnknown() && !v.dyn && !v.isList {
			scan(s.lang, v.s, s.f, s.nest+1)
			return
		}
		s.f.dynamic, s.f.evals = true, true
		if mentions(raw, "stdin", "/dev/stdin", "readfilesync(0") || (len(raw) > 0 && mentions(raw[:1], "input")) {
			s.f.executesStdin = true
		}
		if mentions(raw, "base64", "b64", "atob", "fromhex", "unhexlify", "decode", "unpack") {
			s.f.decodes = true
		}
	case kDecode:
		if name == "Buffer.from" || name == "pack" || name == "unpack" {
			if !mentions(raw, "base64", "hex", "h*", "m") {
				return
			}
		}
		s.f.decodes = true
	case kGlob:
		if len(pos) > 0 {
			s.globbed(arg(0))
		}
	case kSocket:
		s.f.socket = true
	case kDup:
		s.f.dup = true
	}
}

// globbed records a listed pattern and returns it as the value the
// listing stands for.
func (s *scanner) globbed(pattern value) value {
	if pattern.fullyUnknown() {
		return unknown
	}
	if len(s.globs) < maxGlobs {
		s.globs = append(s.globs, pattern)
	}
	return pattern
}

// maxGlobs bounds the patterns one program keeps.
const maxGlobs = 16

// orGlobbed returns v, or when nothing of v is known and the code listed
// files by a pattern, those patterns: for f in glob.glob(p): os.remove(f)
// removes what p matches.
func (s *scanner) orGlobbed(k actKind, call string, v value) value {
	if !v.fullyUnknown() {
		return v
	}
	if len(s.globs) == 0 {
		if len(s.pending) < maxGlobs {
			s.pending = append(s.pending, act{kind: k, call: call})
		}
		return v
	}
	return value{list: s.globs, isList: true}
}

// values evaluates arguments, flattening lists.
func (s *scanner) values(pos [][]token) []value {
	var out []value
	for _, p := range pos {
		out = append(out, s.eval(p).flat()...)
	}
	return out
}

func (s *scanner) shell(call string, v value) {
	if v.isList {
		s.argv(call, v.flat())
		return
	}
	if v.fullyUnknown() {
		s.f.dynamic = true
		return
	}
	if v.dyn {
		s.f.dynamic = true
	}
	s.add(act{kind: actShell, call: call, text: v.s})
}

// process records a program run: argv from lists and strings, or a
// command line when it is one string.
func (s *scanner) process(call string, pos [][]token) {
	var words []value
	lists := 0
	for _, p := range pos {
		v := s.eval(p)
		if v.isList {
			lists++
			if len(v.list) > 0 && v.list[0].isList {
				continue // {env}, [options]
			}
		}
		if !v.isList && len(p) > 0 && p[0].kind == tokPunct && p[0].text == "{" {
			continue // an options hash
		}
		words = append(words, v.flat()...)
	}
	// os.execlp("rm", "rm", "-rf", "/"), os.execv("/bin/rm", ["rm", …]):
	// the first word is the file, the second argv[0].
	if len(words) >= 2 && shell.Normalize(words[0].s) == shell.Normalize(words[1].s) {
		words = words[1:]
	}
	switch {
	case len(words) == 0:
		s.f.dynamic = true
	case len(words) == 1 && lists == 0:
		s.shell(call, words[0])
	default:
		s.argv(call, words)
	}
}

func (s *scanner) argv(call string, words []value) {
	if len(words) == 0 || words[0].fullyUnknown() {
		s.f.dynamic = true
		return
	}
	argv := make([]string, len(words))
	for i, w := range words {
		argv[i] = w.s
		if w.dyn {
			s.f.dynamic = true
		}
	}
	s.add(act{kind: actArgv, call: call, argv: argv})
}

func (s *scanner) pathAct(kind callKind, call string, v value) {
	k := actRead
	switch kind {
	case kWrite:
		k = actWrite
	case kAppend:
		k = actAppend
	case kRemove:
		k = actRemove
	case kRemoveAll:
		k = actRemoveAll
	}
	if k == actRead && strings.Contains(v.s, "://") {
		s.add(act{kind: actFetch, call: call, path: v.s})
		return
	}
	s.pathValue(k, call, v)
}

func (s *scanner) pathValue(k actKind, call string, v value) {
	for _, p := range v.flat() {
		if p.fullyUnknown() {
			continue
		}
		s.add(act{kind: k, call: call, path: p.s})
	}
}

// open reads the mode of open-like calls: Python's open(p, "w"), PHP's
// fopen, Lua's io.open, Ruby's File.open, and Perl's two- and three-
// argument open, whose mode may run a command ("-|", "cmd |").
func (s *scanner) open(call string, pos, args [][]token) {
	if len(pos) == 0 {
		return
	}
	if s.lang == perl {
		s.perlOpen(call, pos)
		return
	}
	p := s.eval(pos[0])
	mode := ""
	if len(pos) > 1 {
		mode = s.eval(pos[1]).s
	}
	for _, a := range args {
		if k, v, ok := keyword(a); ok && k == "mode" {
			mode = s.eval(v).s
		}
	}
	if s.lang == ruby && strings.HasPrefix(p.s, "|") {
		s.shell(call, value{s: strings.TrimPrefix(p.s, "|"), dyn: p.dyn})
		return
	}
	if call == "os.open" {
		mode = ""
		if mentions(s.flatten(pos[1:]), "o_wronly", "o_rdwr", "o_creat", "o_append") {
			mode = "w"
		}
	}
	switch {
	case strings.Contains(mode, "a"):
		s.pathAct(kAppend, call, p)
	case strings.ContainsAny(mode, "wx+"):
		s.pathAct(kWrite, call, p)
	default:
		s.pathAct(kRead, call, s.orGlobbed(actRead, call, p))
	}
}

func (s *scanner) flatten(list [][]token) []token {
	var out []token
	for _, l := range list {
		out = append(out, l...)
	}
	return out
}

func (s *scanner) perlOpen(call string, pos [][]token) {
	if len(pos) > 0 && len(pos[0]) > 0 && (pos[0][len(pos[0])-1].text == "STDIN" || pos[0][len(pos[0])-1].text == "STDOUT" || pos[0][len(pos[0])-1].text == "STDERR") {
		if len(pos) > 1 && strings.Contains(s.eval(pos[1]).s, "&") {
			s.f.dup = true
			return
		}
	}
	if len(pos) >= 3 {
		mode := strings.TrimSpace(s.eval(pos[1]).s)
		switch {
		case mode == "-|" || mode == "|-":
			s.process(call, pos[2:])
		case strings.HasPrefix(mode, ">>"):
			s.pathAct(kAppend, call, s.eval(pos[2]))
		case strings.HasPrefix(mode, ">") || strings.HasPrefix(mode, "+"):
			s.pathAct(kWrite, call, s.eval(pos[2]))
		default:
			s.pathAct(kRead, call, s.eval(pos[2]))
		}
		return
	}
	if len(pos) == 2 {
		spec := s.eval(pos[1])
		t := strings.TrimSpace(spec.s)
		switch {
		case strings.HasSuffix(t, "|"):
			s.shell(call, value{s: strings.TrimSuffix(t, "|"), dyn: spec.dyn})
		case strings.HasPrefix(t, "|"):
			s.shell(call, value{s: strings.TrimPrefix(t, "|"), dyn: spec.dyn})
		case strings.HasPrefix(t, ">>"):
			s.pathAct(kAppend, call, value{s: strings.TrimSpace(t[2:]), dyn: spec.dyn})
		case strings.HasPrefix(t, ">"):
			s.pathAct(kWrite, call, value{s: strings.TrimSpace(t[1:]), dyn: spec.dyn})
		default:
			s.pathAct(kRead, call, value{s: strings.TrimSpace(strings.TrimPrefix(t, "<")), dyn: spec.dyn})
		}
	}
}

// fetch records a download: the URL, and where it is saved when the call
// saves it (urlretrieve, getstore, download.file).
func (s *scanner) fetch(call string, pos, args [][]token) {
	if len(pos) == 0 {
		return
	}
	u := s.eval(pos[0])
	if !strings.Contains(u.s, "://") {
		// source("script.R"), url(x) of a local file: not a download.
		if call == "source" || call == "url" || u.fullyUnknown() && !strings.Contains(strings.ToLower(call), "http") && !strings.Contains(strings.ToLower(call), "url") && call != "fetch" {
			return
		}
	}
	a := act{kind: actFetch, call: call, path: u.s}
	switch {
	case call == "source":
		s.f.evals, s.f.dynamic = true, true
	case strings.HasSuffix(call, "urlretrieve") || strings.HasSuffix(call, "getstore") || strings.HasSuffix(call, "mirror") || call == "download.file":
		if len(pos) > 1 {
			a.dest = s.eval(pos[1]).s
		}
		for _, x := range args {
			if k, v, ok := keyword(x); ok && (k == "destfile" || k == "filename") {
				a.dest = s.eval(v).s
			}
		}
	}
	s.add(a)
}

// method handles a method that acts on its receiver: p.read_text(),
// (Path.home() / ".ssh" / "id_rsa").read_text(). It reports whether the
// name at i was one.
func (s *scanner) method(i int, kind callKind) bool {
	t := s.toks[i]
	dot := strings.LastIndexByte(t.text, '.')
	if dot < 0 {
		return false
	}
	key := t.text[dot:]
	if _, ok := s.lang.calls[key]; !ok {
		return false
	}
	if _, ok := s.lang.calls[t.text]; ok {
		return false // a function the table names in full: os.unlink, glob.glob
	}
	switch kind {
	case kRead, kWrite, kAppend, kRemove, kRemoveAll:
	default:
		return true
	}
	var recv value
	switch {
	case dot > 0:
		v, ok := s.vars[t.text[:dot]]
		if !ok {
			return true
		}
		recv = v
	default:
		return true
	}
	s.pathAct(kind, key, recv)
	return true
}

// methodAfter handles a method whose receiver is the expression that ends
// before the dot at dot: (Path.home() / ".ssh").read_text(),
// Path("x").unlink().
func (s *scanner) methodAfter(dot int, key string, kind callKind) {
	switch kind {
	case kRead, kWrite, kAppend, kRemove, kRemoveAll:
	default:
		return
	}
	start := s.chainStart(dot)
	if start < 0 {
		return
	}
	s.pathAct(kind, key, s.eval(s.toks[start:dot]))
}

// chainStart finds where the expression that ends before the dot at dot
// starts: the name of Path("x").expanduser(), the bracket of (a / b).
func (s *scanner) chainStart(dot int) int {
	j := dot - 1
	for steps := 0; j >= 0 && steps < 64; steps++ {
		t := s.toks[j]
		switch {
		case t.kind == tokPunct && t.text == ")":
			open := s.opening(j)
			if open < 0 {
				return -1
			}
			if open == 0 || s.toks[open-1].kind != tokName {
				return open // a bracketed expression
			}
			j = open - 1
		case t.kind == tokName || t.kind == tokStr:
		default:
			return -1
		}
		if s.isPunct(j-1, ".") {
			j -= 2
			continue
		}
		return j
	}
	return -1
}

// opening finds the bracket that the closing one at i closes, or -1.
func (s *scanner) opening(i int) int {
	depth := 0
	for j := i; j >= 0 && j > i-maxSpan; j-- {
		if s.toks[j].kind != tokPunct {
			continue
		}
		switch s.toks[j].text {
		case ")", "]", "}":
			depth++
		case "(", "[", "{":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
