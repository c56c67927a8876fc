package effects

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Effect is one effect of a call.
type Effect struct {
	Effect string
	Target string
	// Program is the program whose row or verb gave the effect; Command
	// its index in the analysed commands (-1 for a tool call).
	Program string
	Command int
	// Source says where the effect came from: Kind "data" with Row
	// ("kubectl delete"), "verb" with Verb, "tool" with Row (the tool), or
	// "redirect".
	Source     Source
	Confidence string
	// Local, when set, says why the call cannot reach anything real: a
	// dry run, a local context, a loopback endpoint.
	Local string
	// LocalAssumed: the call was judged local only because it names no
	// target (redis-cli without -h), so configuration or the environment
	// may still point it elsewhere.
	LocalAssumed bool
	Approvable   bool
}

// Source is where an effect came from.
type Source struct {
	// Kind is "data", "verb", "tool", "redirect"; enrich adds
	// "target-verb" (a runner target's name), "script-name" (an
	// installer's or uninstaller's) and "destination" (files laid over
	// the home).
	Kind string
	Row  string
	Verb string
}

// Workspace resolves operands against the session's workspace.
type Workspace interface {
	// Inside reports whether arg names a path inside the workspace.
	Inside(arg string) bool
	// Outside returns the absolute path arg names when it lies outside
	// the workspace (and is not a device like /dev/null).
	Outside(arg string) (string, bool)
}

// Matcher is a compiled Table. It is immutable and safe for concurrent use.
type Matcher struct {
	programs map[string]*program
	verbs    map[string]Verb
	quiet    map[string]bool
	tools    map[string][]*row
	sureOpts []string
	nouns    map[string]bool
}

type program struct {
	name      string // the entry's own name, after an alias
	launches  string
	valueOpts map[string]bool
	dryRun    []string
	tracks    []string
	plugins   map[string]bool // the program's own subcommands; nil: no plugins
	local     []Local
	rows      []*row
}

type row struct {
	Row
	words  []string
	args   func() *regexp.Regexp // nil without Args; compiled on first use
	also   []func() *regexp.Regexp
	unless func() *regexp.Regexp
	env    map[string]func() *regexp.Regexp
	score  int
	label  string // "kubectl delete", for the source
}

// Compile checks a table and builds its matcher.
func Compile(t *Table) (*Matcher, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	m := &Matcher{
		programs: make(map[string]*program, len(t.Programs)),
		verbs:    make(map[string]Verb, len(t.Verbs)),
		quiet:    make(map[string]bool, len(t.Quiet)),
		tools:    make(map[string][]*row, len(t.Tools)),
	}
	for name, p := range t.Programs {
		own := name
		entry := p
		if p.Alias != "" {
			base := t.Programs[p.Alias]
			own = p.Alias
			entry = Program{
				Launches:     base.Launches,
				ValueOptions: append(append([]string(nil), base.ValueOptions...), p.ValueOptions...),
				DryRun:       append(append([]string(nil), base.DryRun...), p.DryRun...),
				Tracks:       append(append([]string(nil), base.Tracks...), p.Tracks...),
				Plugins:      append(append([]string(nil), base.Plugins...), p.Plugins...),
				Local:        append(append([]Local(nil), p.Local...), base.Local...),
				Rows:         append(append([]Row(nil), base.Rows...), p.Rows...),
			}
			if p.Launches != "" {
				entry.Launches = p.Launches
			}
		}
		cp := &program{name: own, launches: entry.Launches, valueOpts: map[string]bool{}, dryRun: entry.DryRun, tracks: entry.Tracks, local: entry.Local}
		for _, o := range entry.ValueOptions {
			cp.valueOpts[o] = true
		}
		if len(entry.Plugins) > 0 {
			cp.plugins = make(map[string]bool, len(entry.Plugins))
			for _, w := range entry.Plugins {
				cp.plugins[w] = true
			}
		}
		for _, r := range entry.Rows {
			cp.rows = append(cp.rows, compileRow(own, r))
		}
		m.programs[name] = cp
	}
	for k, v := range t.Verbs {
		if v.Confidence == "" {
			v.Confidence = Medium
		}
		m.verbs[strings.ToLower(k)] = v
	}
	for _, q := range t.Quiet {
		m.quiet[q] = true
	}
	m.sureOpts = t.Sure.Options
	m.nouns = make(map[string]bool, len(t.Sure.Nouns))
	for _, n := range t.Sure.Nouns {
		m.nouns[strings.ToLower(n)] = true
	}
	for name, rows := range t.Tools {
		for _, r := range rows {
			m.tools[strings.ToLower(name)] = append(m.tools[strings.ToLower(name)], compileRow(name, r))
		}
	}
	return m, nil
}

func compileRow(prog string, r Row) *row {
	cr := &row{Row: r, words: strings.Fields(strings.ToLower(r.Path))}
	if r.Confidence == "" {
		cr.Confidence = High
	}
	if r.Args != "" {
		// Compiled when a call first reaches the row: a start compiled
		// every row's expression, a third of a per_event process's CPU,
		// for the few rows one event reaches. Table.check parsed it with
		// the parser regexp.Compile uses, so it cannot fail here.
		cr.args = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(r.Args) })
	}
	for _, expr := range r.AlsoArgs {
		cr.also = append(cr.also, sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) }))
	}
	if r.Unless != "" {
		cr.unless = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(r.Unless) })
	}
	for name, expr := range r.Env {
		if cr.env == nil {
			cr.env = make(map[string]func() *regexp.Regexp, len(r.Env))
		}
		cr.env[name] = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
	}
	// A longer path is more specific, a named word more than a *; a
	// condition on the options or the arguments narrows a path further.
	for _, w := range cr.words {
		cr.score += 4
		if w == "*" {
			cr.score--
		}
	}
	if len(r.Options) > 0 || r.Args != "" || len(r.AlsoArgs) > 0 {
		cr.score++
	}
	if len(r.Env) > 0 {
		cr.score++ // narrower again: rails db:migrate with RAILS_ENV=production
	}
	cr.label = strings.TrimSpace(prog + " " + r.Path)
	return cr
}

// Known reports whether the table has an entry for a program.
func (m *Matcher) Known(name string) bool {
	_, ok := m.programs[name]
	return ok
}

// maxLaunches bounds npx npx npx …: each launch is one more lookup.
const maxLaunches = 4

// Command appends the effects of command c, the i-th analysed command,
// to out.
func (m *Matcher) Command(c *shell.Command, i int, ws Workspace, out []Effect) []Effect {
	if m == nil || len(c.Argv) == 0 {
		return out
	}
	name, args := c.Name, c.Argv[1:]
	for range maxLaunches {
		p := m.programs[name]
		if n := len(out); p == nil && name == c.Name {
			if out = m.cmdletEffects(c, i, out); len(out) > n {
				return out
			}
		}
		if p == nil {
			return m.verbEffects(name, args, c, i, out)
		}
		if p.launches != "" {
			if inner, rest, ok := p.launched(args); ok {
				name, args = inner, rest
				continue
			}
		}
		n := len(out)
		out = m.dataEffects(p, name, args, c, i, ws, out)
		if len(out) > n || p.plugins == nil {
			return out
		}
		pos := p.positionals(args)
		if len(pos) == 0 || p.plugins[args[pos[0]]] || strings.HasPrefix(args[pos[0]], "$") {
			return out
		}
		// cargo dist …: the plugin program cargo-dist, by its own entry
		// or by its words.
		plugin, rest := name+"-"+strings.ToLower(args[pos[0]]), args[pos[0]+1:]
		if q := m.programs[plugin]; q != nil {
			return m.dataEffects(q, plugin, rest, c, i, ws, out)
		}
		return m.verbEffects(plugin, rest, c, i, out)
	}
	return out
}

// launched finds the program a launcher runs and its arguments.
func (p *program) launched(args []string) (string, []string, bool) {
	if p.launches == "first" {
		pos := p.positionals(args)
		if len(pos) == 0 {
			return "", nil, false
		}
		return packageBin(args[pos[0]]), args[pos[0]+1:], true
	}
	for j, a := range args {
		if a == p.launches && j+1 < len(args) {
			k := j + 1
			if !strings.HasPrefix(p.launches, "-") {
				// npm exec --package=x -- tool: options of the
				// launcher word come before the program.
				for k < len(args) && strings.HasPrefix(args[k], "-") {
					if p.valueOpts[args[k]] {
						k++
					}
					k++
				}
				if k >= len(args) {
					return "", nil, false
				}
			}
			return packageBin(args[k]), args[k+1:], true // pnpm dlx pkg@1, python -m twine
		}
		if v, ok := strings.CutPrefix(a, p.launches); ok && v != "" && len(p.launches) == 2 && p.launches[0] == '-' {
			return packageBin(v), args[j+1:], true // python -mtwine
		}
	}
	return "", nil, false
}

// packageBin names the program a package spec runs: @scope/tool@1 →
// tool, and a scope's own CLI package by its scope: @railway/cli →
// railway.
func packageBin(spec string) string {
	spec = strings.ToLower(spec)
	if at := strings.LastIndexByte(spec, '@'); at > 0 {
		spec = spec[:at]
	}
	if slash := strings.LastIndexByte(spec, '/'); slash >= 0 {
		if spec[slash+1:] == "cli" && strings.HasPrefix(spec, "@") {
			return spec[1:slash]
		}
		spec = spec[slash+1:]
	}
	return spec
}

// positionals returns the indices of the arguments that are not options
// or option values.
func (p *program) positionals(args []string) []int {
	var pos []int
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			for k := j + 1; k < len(args); k++ {
				pos = append(pos, k)
			}
			return pos
		case len(a) > 1 && a[0] == '-':
			if p != nil && p.valueOpts[a] {
				j++
			}
		default:
			pos = append(pos, j)
		}
	}
	return pos
}

// hasOption reports whether args give option o: exactly, as o=value, or
// for a one-letter o inside a short cluster (-fu).
func hasOption(args []string, o string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == o || strings.HasPrefix(a, o+"=") {
			return true
		}
		if len(o) == 2 && o[0] == '-' && o[1] != '-' && len(a) > 2 && len(a) <= 5 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], o[1]) >= 0 && isLetters(a[1:]) {
			return true
		}
	}
	return false
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// rehearsalOptions make a call a rehearsal whatever the program, table
// row or verb found its effect: they name the act of showing what would
// change. -n is one only where a program's table says so (dry_run).
var rehearsalOptions = []string{"--dry-run", "--dry_run", "--dryrun", "--what-if", "--whatif", "--noop"}

// publishRehearsals keep a publish on this machine: a snapshot build, or
// the publish step skipped (goreleaser release --snapshot).
var publishRehearsals = []string{"--snapshot", "--skip-publish", "--no-publish"}

// rehearsal returns the option that makes an act with this effect a
// rehearsal, "" for none: the one judgement of every route (table rows,
// verbs of unknown CLIs).
func rehearsal(args []string, effect string) string {
	if d := dryRun(args, rehearsalOptions); d != "" {
		return d
	}
	if effect != "publish" {
		return ""
	}
	if d := dryRun(args, publishRehearsals); d != "" {
		return d
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--skip="); ok && slices.Contains(strings.Split(v, ","), "publish") {
			return a
		}
	}
	return ""
}

// outputTemplate matches an output format that selects fields
// (kubectl/oc -o jsonpath=…, custom-columns=…, go-template=…).
var outputTemplate = regexp.MustCompile(`^(jsonpath|jsonpath-as-json|custom-columns|go-template|template)=(.*)$`)

// metadataField names a field that holds no secret value.
var metadataField = regexp.MustCompile(`\.(metadata|kind|apiVersion|type)\b`)

// valueField matches a template that reaches a secret's values: its data
// or stringData (in any notation), the whole object ({.}, {{ . }},
// {{toJson .}}), a recursive descent, or whole items ({.items[*]}).
var valueField = regexp.MustCompile(`(^|[^A-Za-z])(data|stringData)([^A-Za-z0-9]|$)|\{\s*[.@$]?\s*\}|\{\{-?\s*[.$]\s*-?\}\}|\s[.$]\s*-?\}\}|\.\.|\[[^\]]*\]\s*\}|items\s*\}`)

// metadataOutput returns the -o/--output value when every output format
// the call gives is a template that reads metadata only (a creation
// time, a name): reading it reveals no secret. "" otherwise.
func metadataOutput(args []string) string {
	var vals []string
	for i, a := range args {
		if a == "--" {
			break
		}
		switch {
		case (a == "-o" || a == "--output") && i+1 < len(args):
			vals = append(vals, args[i+1])
		case strings.HasPrefix(a, "--output="):
			vals = append(vals, a[len("--output="):])
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--") && len(a) > 2:
			vals = append(vals, strings.TrimPrefix(a[2:], "="))
		}
	}
	if len(vals) == 0 {
		return ""
	}
	for _, v := range vals {
		m := outputTemplate.FindStringSubmatch(v)
		if m == nil || !metadataField.MatchString(m[2]) || valueField.MatchString(m[2]) {
			return ""
		}
	}
	return vals[0]
}

// dryRun returns the dry-run option args give, "" for none. A value of
// none or false (kubectl --dry-run=none) is no dry run.
func dryRun(args []string, opts []string) string {
	for _, o := range opts {
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == o {
				return o
			}
			if v, ok := strings.CutPrefix(a, o+"="); ok {
				if v != "none" && v != "false" && v != "0" {
					return a
				}
			}
		}
	}
	return ""
}

func (m *Matcher) dataEffects(p *program, name string, args []string, c *shell.Command, i int, ws Workspace, out []Effect) []Effect {
	for _, a := range args {
		if a == "--help" || a == "--version" {
			return out // prints usage, does nothing
		}
	}
	pos := p.positionals(args)
	if len(p.tracks) > 0 && len(pos) > 0 && slices.Contains(p.tracks, strings.ToLower(args[pos[0]])) {
		pos = pos[1:] // gcloud beta run deploy is gcloud run deploy
	}
	words := make([]string, 0, 4)
	for _, j := range pos {
		if len(words) == 4 {
			break
		}
		words = append(words, strings.ToLower(args[j]))
	}
	best := -1
	var hits []*row
	for _, r := range p.rows {
		if !r.matches(words, args, c.Env) || r.Stdin && !readsStdin(c) || r.score < best {
			continue
		}
		if r.score > best {
			best, hits = r.score, hits[:0]
		}
		hits = append(hits, r)
	}
	for _, r := range hits {
		if r.Effect == None {
			return out
		}
	}
	for _, r := range hits {
		e := Effect{
			Effect: r.Effect, Target: r.Target, Program: name, Command: i,
			Source:     Source{Kind: "data", Row: r.label},
			Confidence: r.Confidence, Approvable: r.Approvable,
		}
		if e.Target == "" {
			e.Target = p.name
		}
		rest := pos
		if len(rest) >= len(r.words) {
			rest = rest[len(r.words):]
		}
		e.Local, e.LocalAssumed = p.local1(r, args, rest, c, ws)
		if r.Operands == "outside" {
			for _, j := range pos {
				if abs, ok := ws.Outside(args[j]); ok {
					e.Target = abs
					out = append(out, e)
				}
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

func (r *row) matches(words, args []string, env []shell.Assign) bool {
	if len(words) < len(r.words) {
		return false
	}
	for k, w := range r.words {
		if w != "*" && w != words[k] {
			return false
		}
	}
	if len(r.Options) > 0 {
		found := false
		for _, o := range r.Options {
			if hasOption(args, o) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if r.env != nil && !r.envMatches(env) {
		return false
	}
	if r.unless != nil && anyMatches(r.unless(), args) {
		return false
	}
	for _, re := range r.also {
		if !anyMatches(re(), args) {
			return false
		}
	}
	return r.args == nil || anyMatches(r.args(), args)
}

// anyMatches reports whether one of args matches re.
func anyMatches(re *regexp.Regexp, args []string) bool {
	for _, a := range args {
		if re.MatchString(a) {
			return true
		}
	}
	return false
}

// readsStdin reports whether a command's standard input is fed: a file or
// here-document redirected in, or another command's output.
func readsStdin(c *shell.Command) bool {
	for _, r := range c.Redirects {
		if (r.Fd == "" || r.Fd == "0") && strings.HasPrefix(r.Op, "<") && r.Op != "<>" {
			return true
		}
	}
	return len(c.Inputs) > 0
}

// envMatches reports whether one of the command's assignments gives a
// variable of the row's Env a value its expression matches.
func (r *row) envMatches(env []shell.Assign) bool {
	for _, a := range env {
		if re, ok := r.env[a.Name]; ok && re().MatchString(a.Value) {
			return true
		}
	}
	return false
}

// local1 says why a call is local, "" when it may reach something real,
// and whether that rests only on the call naming no target. A rule that
// names a target wins over one that assumes, so `redis-cli -h 127.0.0.1`
// is judged by its host.
func (p *program) local1(r *row, args []string, rest []int, c *shell.Command, ws Workspace) (why string, assumed bool) {
	if d := rehearsal(args, r.Effect); d != "" {
		return "dry run (" + d + ")", false
	}
	if r.Effect == "secret.read" {
		if o := metadataOutput(args); o != "" {
			return "reads metadata only (" + o + ")", false
		}
	}
	if d := dryRun(args, r.DryRun); d != "" {
		return "dry run (" + d + ")", false
	}
	if d := dryRun(args, p.dryRun); d != "" {
		return "dry run (" + d + ")", false
	}
	for _, ls := range [][]Local{r.Local, p.local} {
		for _, l := range ls {
			if l.names(args, rest, c, ws) {
				return l.Why, false
			}
		}
	}
	for _, ls := range [][]Local{r.Local, p.local} {
		for _, l := range ls {
			if len(l.Absent) > 0 && !l.anyGiven(args, c) {
				return l.Why, true
			}
		}
	}
	return "", false
}

// names reports whether the call names a target this rule judges local.
func (l *Local) names(args []string, rest []int, c *shell.Command, ws Workspace) bool {
	for _, o := range l.Options {
		if v, ok := optionValue(args, o); ok && l.judge(v, ws) {
			return true
		}
	}
	for _, name := range l.Env {
		for _, e := range c.Env {
			if e.Name == name && l.judge(e.Value, ws) {
				return true
			}
		}
		if v, ok := operandAssign(args, name); ok && l.judge(v, ws) {
			return true
		}
	}
	if len(rest) > 0 {
		switch l.Operand {
		case "first":
			return l.judge(args[rest[0]], ws)
		case "last":
			return l.judge(args[rest[len(rest)-1]], ws)
		}
	}
	return false
}

// anyGiven reports whether one of the Absent options or assignments is
// given.
func (l *Local) anyGiven(args []string, c *shell.Command) bool {
	for _, o := range l.Absent {
		if strings.HasPrefix(o, "-") {
			if _, ok := optionValue(args, o); ok || hasOption(args, o) {
				return true
			}
			continue
		}
		for _, e := range c.Env {
			if e.Name == o {
				return true
			}
		}
		if _, ok := operandAssign(args, o); ok {
			return true
		}
	}
	return false
}

// operandAssign finds NAME=value among a command's arguments: rake, rails
// and make take the variables of their environment that way
// (rails db:schema:load RAILS_ENV=test).
func operandAssign(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func (l *Local) judge(v string, ws Workspace) bool {
	if v == "" {
		return false
	}
	for _, g := range l.Match {
		if ok, _ := path.Match(g, v); ok {
			return true
		}
	}
	if l.Loopback && OnMachine(v) {
		return true
	}
	if l.Reserved && ReservedHost(HostOf(v)) {
		return true
	}
	// A URL is never a workspace path, though it reads as a relative one
	// (https://api.nuget.org/… would be ./https:/api.nuget.org/…).
	if l.Path && !pathShaped(v) {
		return false
	}
	return l.Workspace && ws != nil && !strings.Contains(v, "://") && ws.Inside(v)
}

// pathShaped reports whether v is written as a path rather than a name.
func pathShaped(v string) bool {
	return strings.ContainsRune(v, '/') || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~")
}

// optionValue returns the value given to option o: "-o v", "-o=v", or for
// a one-letter option "-ov".
func optionValue(args []string, o string) (string, bool) {
	for j, a := range args {
		if a == "--" {
			break
		}
		if a == o && j+1 < len(args) {
			return args[j+1], true
		}
		if v, ok := strings.CutPrefix(a, o+"="); ok {
			return v, true
		}
		if len(o) == 2 && o[1] != '-' && len(a) > 2 && strings.HasPrefix(a, o) {
			return a[2:], true
		}
	}
	return "", false
}

// HostOf returns the host a value names: a URL's host, the registry of an
// image reference (localhost:5000/app), or host[:port].
func HostOf(v string) string {
	v = strings.TrimPrefix(v, "jdbc:") // jdbc:postgresql://host/db
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil {
			return strings.ToLower(u.Hostname())
		}
		return ""
	}
	if at := strings.LastIndexByte(v, '@'); at >= 0 {
		v = v[at+1:]
	}
	if slash := strings.IndexByte(v, '/'); slash >= 0 {
		v = v[:slash]
	}
	if strings.HasPrefix(v, "[") {
		if end := strings.IndexByte(v, ']'); end > 0 {
			return v[1:end]
		}
	}
	if colon := strings.LastIndexByte(v, ':'); colon >= 0 && strings.Count(v, ":") == 1 {
		v = v[:colon]
	}
	return strings.ToLower(v)
}

// OnMachine reports whether a value names something that never leaves
// the machine: a loopback host, a file: URL, or a database embedded in
// the process or a local file (jdbc:h2:mem:, jdbc:sqlite:, sqlite:///…).
// A Maven repository spec (id::layout::url, id::url) is judged by its
// URL. The shapes are narrow on purpose: an image reference such as
// sqlite:3.45 or file:1.0 names a registry, not a file.
func OnMachine(v string) bool {
	if i := strings.LastIndex(v, "::"); i >= 0 {
		v = v[i+2:]
	}
	if onMachineURL.MatchString(strings.ToLower(v)) {
		return true
	}
	return Loopback(HostOf(v))
}

// onMachineURL matches file: URLs and embedded databases. A server mode
// (jdbc:h2:tcp://, jdbc:hsqldb:hsql://, jdbc:derby://) has a host and is
// judged by it.
var onMachineURL = regexp.MustCompile(`^file:[/.~]|^jdbc:(h2:(mem:|file:|\.|/|~)|hsqldb:(mem:|file:|res:)|derby:([^/]|/[^/])|sqlite:)|^sqlite3?(\+[a-z0-9]+)?:(//|:memory:|[^/]*/|.*\.(db|sqlite3?)$)`)

// ReservedHost reports whether a host is under a name reserved for tests,
// examples or the local network (RFC 6761, 6762): api.test,
// printer.local. No public service answers there.
func ReservedHost(host string) bool {
	for _, tld := range []string{".test", ".example", ".invalid", ".local"} {
		if strings.HasSuffix(host, tld) {
			return true
		}
	}
	return false
}

// Loopback reports whether a host never leaves the machine.
func Loopback(host string) bool {
	switch host {
	case "localhost", "::1", "0.0.0.0", "host.docker.internal":
		return true
	}
	return strings.HasPrefix(host, "127.") || strings.HasSuffix(host, ".localhost")
}

// readWords follow a noun of an unknown CLI in a call that only looks:
// `acme release list` is no release.
var readWords = map[string]bool{
	"list": true, "ls": true, "get": true, "show": true, "view": true, "describe": true,
	"status": true, "info": true, "history": true, "diff": true, "plan": true, "logs": true,
	"log": true, "help": true, "inspect": true, "search": true, "notes": true, "preview": true,
	"check": true, "validate": true, "lint": true, "test": true, "watch": true, "explain": true,
}

// compoundWord matches a subcommand made of several words (build-promote,
// create_github_release, dist-tag, publishAll), not a path or a file name.
var compoundWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*([-_:]?[A-Z]?[A-Za-z0-9]+)*$`)

// verbEffects lets the subcommand words of a CLI the table does not know
// speak: the first or second operand, when it is a plain word, or a sure
// delete as the third (see Sure).
func (m *Matcher) verbEffects(name string, args []string, c *shell.Command, i int, out []Effect) []Effect {
	if len(m.verbs) == 0 || m.quiet[name] || strings.HasPrefix(name, "$") {
		return out
	}
	var words []string
	for j, a := range args {
		if a == "--help" || a == "-h" {
			return out
		}
		if a == "--version" && (j+1 == len(args) || strings.HasPrefix(args[j+1], "-")) {
			return out // prints the version; --version 1.2.0 is a value
		}
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' {
			continue
		}
		words = append(words, a)
		if len(words) == 4 {
			break
		}
	}
	for k, w := range words {
		if k == 3 {
			break
		}
		lw := strings.ToLower(w)
		v, ok := m.verbs[lw]
		if !ok && compoundWord.MatchString(w) {
			// build-promote, create_github_release: the words of a
			// compound subcommand speak as a tool name's do.
			lw, v, ok = m.nameVerb(nameWords(w))
		}
		if !ok || strings.ToLower(w) != w && strings.ToUpper(w) == w {
			continue // ALLCAPS words are text, not subcommands
		}
		if k+1 < len(words) && readWords[strings.ToLower(words[k+1])] {
			return out
		}
		conf := v.Confidence
		if v.Sure && conf == Low && m.sure(args, words, k) {
			conf = Medium
		}
		if k == 2 && (!v.Sure || conf == Low) {
			// A third word is a subcommand only after a group and a
			// resource (exo compute instance delete); otherwise it is
			// more likely an argument.
			continue
		}
		e := Effect{
			Effect: v.Effect, Target: cmpOr(v.Target, name), Program: name, Command: i,
			Source:     Source{Kind: "verb", Verb: lw},
			Confidence: conf, Approvable: v.Approvable,
		}
		if d := rehearsal(args, v.Effect); d != "" {
			e.Local = "dry run (" + d + ")"
		}
		return append(out, e)
	}
	return out
}

// sure reports whether a verb at words[k] is meant: an option skips the
// CLI's confirmation, or the word before or after it names something
// that holds data.
func (m *Matcher) sure(args, words []string, k int) bool {
	for _, o := range m.sureOpts {
		if hasOption(args, o) {
			return true
		}
	}
	for _, j := range []int{k - 1, k + 1} {
		if j >= 0 && j < len(words) && m.nouns[strings.ToLower(words[j])] {
			return true
		}
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Tool appends the effects of a call of the tool named name (for an MCP
// tool, its own name) to out; args are the strings of its input, which
// a row's args expression is matched on.
func (m *Matcher) Tool(name string, args []string, out []Effect) []Effect {
	if m == nil {
		return out
	}
	for _, r := range m.tools[strings.ToLower(name)] {
		if r.Effect == None || !r.matches(nil, args, nil) {
			continue
		}
		out = append(out, Effect{
			Effect: r.Effect, Target: cmpOr(r.Target, name), Program: name, Command: -1,
			Source:     Source{Kind: "tool", Row: name},
			Confidence: r.Confidence, Approvable: r.Approvable,
		})
	}
	return out
}
