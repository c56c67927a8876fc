// Package effects models what a call does rather than which program it
// names: each command gets effects from a small vocabulary (it reads a
// secret, destroys data in a store, publishes, …), each with a target, a
// confidence, and, when the call cannot reach anything real, why it was
// judged local.
//
// How each CLI reaches its effects is data, not code: a Table maps
// program → subcommand path → effect, with the options that change it
// (dry runs, local contexts and endpoints). The built-in table ships with
// the Rego library (rego/lib/effects/clis.json); a team adds rows with a
// data document. Compile turns a table into a Matcher, which does one map
// lookup per command on the hot path.
package effects

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
)

// The vocabulary (docs/policy.md, "Effects"). It is kept small on
// purpose: rules are written against these, and a CLI reaches them
// through data.
const (
	SecretRead      = "secret.read"      // prints or copies a credential
	FSWriteOutside  = "fs.write-outside" // writes a file outside the workspace
	FSDeleteOutside = "fs.delete-outside"
	ConfigChange    = "config.change"    // system or user configuration
	Persistence     = "persistence"      // makes something run later
	ExecRemoteCode  = "exec.remote-code" // runs code fetched from elsewhere
	RemoteChange    = "remote.change"    // changes remote state
	Publish         = "publish"          // publishes, releases or deploys
	AccessChange    = "access.change"    // IAM, branch protection, visibility, keys
	SecurityWeaken  = "security.weaken"  // switches a security control off
	StoreDestroy    = "store.destroy"    // destroys data in a store
	// None in a row says a subcommand path has no effect: it overrides a
	// shorter row (terraform state list under terraform state).
	None = "none"
)

// Vocabulary lists the effects a row may name.
var Vocabulary = []string{
	SecretRead, FSWriteOutside, FSDeleteOutside, ConfigChange, Persistence,
	ExecRemoteCode, RemoteChange, Publish, AccessChange, SecurityWeaken, StoreDestroy,
}

// Confidence levels, from the most to the least sure.
const (
	High   = "high"   // a data row for this program and path
	Medium = "medium" // a strong verb of an unknown CLI (deploy, destroy)
	Low    = "low"    // recorded for rules that want it; the library does not deny on it
)

// Table is the data the model is built from: the JSON document at
// data.ahp.lib.effects, extended by data.ahp_opa.config.effects.
type Table struct {
	// Description says what the document is, for its readers.
	Description string `json:"description,omitempty"`
	// Programs maps a program name (as the shell analysis normalises it:
	// lower case, no directory, no .exe) to what it does.
	Programs map[string]Program `json:"programs"`
	// Verbs are the subcommand words that speak for a CLI the table does
	// not know (deploy, publish, destroy).
	Verbs map[string]Verb `json:"verbs"`
	// Quiet programs take words that are not subcommands (echo, grep,
	// make): their arguments never speak as verbs.
	Quiet []string `json:"quiet"`
	// Sure says when a verb that is not sure enough to deny on its own
	// (delete, remove) is: see Sure.
	Sure Sure `json:"sure"`
	// Tools maps a tool name (an MCP tool's own name, lower case) to the
	// effects a call of it has.
	Tools map[string][]Row `json:"tools"`
}

// Program is what the table knows of one CLI.
type Program struct {
	// Alias names another program whose entry this one shares (tofu →
	// terraform); its own fields add to that entry.
	Alias string `json:"alias,omitempty"`
	// Launches says the program runs another, whose effects count: "first"
	// for the first operand (npx pkg), an option (-m) for its value.
	Launches string `json:"launches,omitempty"`
	// ValueOptions take a separate value (-n prod): the value is no
	// subcommand.
	ValueOptions []string `json:"value_options,omitempty"`
	// DryRun options make every effect a rehearsal (--dry-run, --dry-run=client).
	DryRun []string `json:"dry_run,omitempty"`
	// Plugins, when set, are the program's own subcommands: any other
	// first word W runs the plugin program NAME-W (cargo dist runs
	// cargo-dist), judged by its own entry or, without one, by its
	// words as an unknown CLI's (cargo ci homebrew publish).
	Plugins []string `json:"plugins,omitempty"`
	// Tracks are words that only choose a release track of the same
	// commands (gcloud beta run deploy): left out when rows are matched.
	Tracks []string `json:"tracks,omitempty"`
	// Local tells when the call cannot reach anything real.
	Local []Local `json:"local,omitempty"`
	Rows  []Row   `json:"rows,omitempty"`
}

// Row is one program → subcommand path → effect entry.
type Row struct {
	// Path is the subcommand words, space-separated; * stands for any one
	// word; "" is the program itself.
	Path string `json:"path"`
	// Options, when set, must include one given option (--force).
	Options []string `json:"options,omitempty"`
	// Args, when set, is a regular expression one argument must match
	// (DROP DATABASE in psql -c).
	Args string `json:"args,omitempty"`
	// Env, when set, maps environment variables to a regular expression:
	// the command's own assignment of one of them must match it
	// (MIX_ENV=prod, a DATABASE_URL given on the command line). What a
	// call says of its environment names its target as surely as an
	// option does.
	Env map[string]string `json:"env,omitempty"`
	// AlsoArgs, when set, are regular expressions that must each match
	// one argument too: a write (POST) that carries credentials
	// (Authorization: …) needs both.
	AlsoArgs []string `json:"also_args,omitempty"`
	// Unless, when set, is a regular expression no argument may match
	// (-G or -X GET turn curl's --data into a query).
	Unless string `json:"unless,omitempty"`
	// Stdin, when set, requires the command to read a script on its
	// standard input: a file or here-document redirected in, or another
	// command's output (mysql -h db.example.com app < dump.sql).
	Stdin bool `json:"stdin,omitempty"`
	// Operands "outside" gives one effect per operand that names a path
	// outside the workspace, with that path as the target.
	Operands   string `json:"operands,omitempty"`
	Effect     string `json:"effect"`
	Target     string `json:"target,omitempty"`
	Confidence string `json:"confidence,omitempty"` // default high
	// Approvable marks an act a human may approve rather than a forbidden
	// one (a release, a deploy).
	Approvable bool `json:"approvable,omitempty"`
	// Local rules of the row, checked before the program's.
	Local []Local `json:"local,omitempty"`
	// DryRun options of the row, in addition to the program's.
	DryRun []string `json:"dry_run,omitempty"`
}

// Local is one way a call is judged local. Its values are read from the
// options, the environment assignments or an operand; the call is local
// when one of them matches.
type Local struct {
	Options []string `json:"options,omitempty"`
	Env     []string `json:"env,omitempty"`
	// Operand is "first" or "last": that operand after the subcommand path.
	Operand string `json:"operand,omitempty"`
	// Absent holds options and environment assignments whose absence
	// makes the call local: a client that connects to this machine
	// unless told otherwise (redis-cli without -h).
	Absent []string `json:"absent,omitempty"`
	// Match holds globs (* within a word) a value is local for.
	Match []string `json:"match,omitempty"`
	// Loopback: a value is local when the host it names is loopback.
	Loopback bool `json:"loopback,omitempty"`
	// Reserved: a value is local when the host it names is under a name
	// reserved for tests and the local network (.test, .example,
	// .invalid, .local), which no public service answers.
	Reserved bool `json:"reserved,omitempty"`
	// Workspace: a value is local when it names a path in the workspace.
	Workspace bool `json:"workspace,omitempty"`
	// Path: only a value written as a path (./feed, a/b, /srv/feed) is
	// judged; a bare word names a configured source (dotnet nuget push
	// -s nuget.org), which may be anywhere.
	Path bool   `json:"path,omitempty"`
	Why  string `json:"why"`
}

// Verb is what a subcommand word says of a CLI the table does not know.
type Verb struct {
	Effect     string `json:"effect"`
	Target     string `json:"target,omitempty"`
	Confidence string `json:"confidence,omitempty"` // default medium
	Approvable bool   `json:"approvable,omitempty"`
	// Sure: the table's Sure options and nouns raise this verb to medium
	// confidence (delete, remove; not uninstall, whose target is a local
	// tool).
	Sure bool `json:"sure,omitempty"`
}

// Sure holds what makes a low-confidence verb of an unknown CLI mean it:
// an option that skips the CLI's own confirmation (--yes, --force), or
// a noun next to the verb that names something holding data (acmectl
// database delete prod, acmectl delete cluster eu-1).
type Sure struct {
	Options []string `json:"options,omitempty"`
	Nouns   []string `json:"nouns,omitempty"`
}

// ErrTable wraps every problem of a table document.
var ErrTable = errors.New("effects table")

// Parse reads a table document (JSON).
func Parse(data []byte) (*Table, error) {
	var t Table
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTable, err)
	}
	return &t, nil
}

// FromDocument reads a table from a data document already decoded (the
// policy's data at data.ahp.lib.effects or data.ahp_opa.config.effects).
// A nil document is an empty table.
func FromDocument(doc any) (*Table, error) {
	if doc == nil {
		return &Table{}, nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTable, err)
	}
	return Parse(b)
}

// Merge returns the table with more's entries added: a program's rows and
// options are appended to the ones it had, so a team's row for a path the
// library knows wins (later rows of equal specificity speak too, and a
// "none" row silences them).
func (t *Table) Merge(more *Table) *Table {
	out := &Table{
		Programs: make(map[string]Program, len(t.Programs)+len(more.Programs)),
		Verbs:    map[string]Verb{},
		Quiet:    slices.Concat(t.Quiet, more.Quiet),
		Sure: Sure{
			Options: slices.Concat(t.Sure.Options, more.Sure.Options),
			Nouns:   slices.Concat(t.Sure.Nouns, more.Sure.Nouns),
		},
		Tools: map[string][]Row{},
	}
	for k, v := range t.Programs {
		out.Programs[k] = v
	}
	for k, v := range more.Programs {
		p := out.Programs[k]
		if v.Alias != "" {
			p.Alias = v.Alias
		}
		if v.Launches != "" {
			p.Launches = v.Launches
		}
		p.ValueOptions = slices.Concat(p.ValueOptions, v.ValueOptions)
		p.DryRun = slices.Concat(p.DryRun, v.DryRun)
		p.Tracks = slices.Concat(p.Tracks, v.Tracks)
		p.Plugins = slices.Concat(p.Plugins, v.Plugins)
		p.Local = slices.Concat(p.Local, v.Local)
		p.Rows = slices.Concat(p.Rows, v.Rows)
		out.Programs[k] = p
	}
	for _, m := range []map[string]Verb{t.Verbs, more.Verbs} {
		for k, v := range m {
			out.Verbs[k] = v
		}
	}
	for _, m := range []map[string][]Row{t.Tools, more.Tools} {
		for k, v := range m {
			out.Tools[k] = slices.Concat(out.Tools[k], v)
		}
	}
	return out
}

// check reports the first row, verb or local rule that cannot work: an
// effect outside the vocabulary, a bad confidence, a regular expression
// that does not compile. A typo there would protect nothing while looking
// as if it did.
func (t *Table) check() error {
	known := func(e string) bool { return e == None || slices.Contains(Vocabulary, e) }
	conf := func(c string) bool { return c == "" || c == High || c == Medium || c == Low }
	checkRows := func(where string, rows []Row) error {
		for i, r := range rows {
			switch {
			case !known(r.Effect):
				return fmt.Errorf("%w: %s row %d: unknown effect %q (want one of %s)", ErrTable, where, i, r.Effect, strings.Join(Vocabulary, ", "))
			case !conf(r.Confidence):
				return fmt.Errorf("%w: %s row %d: confidence %q: want high, medium or low", ErrTable, where, i, r.Confidence)
			case r.Operands != "" && r.Operands != "outside":
				return fmt.Errorf("%w: %s row %d: operands %q: want outside", ErrTable, where, i, r.Operands)
			}
			// The parser regexp.Compile runs, and all that can fail in
			// it; the matcher compiles the row when first used.
			for _, expr := range append([]string{r.Args, r.Unless}, r.AlsoArgs...) {
				if expr == "" {
					continue
				}
				if _, err := syntax.Parse(expr, syntax.Perl); err != nil {
					return fmt.Errorf("%w: %s row %d: args: %w", ErrTable, where, i, err)
				}
			}
			for _, name := range sortedKeys(r.Env) {
				if _, err := syntax.Parse(r.Env[name], syntax.Perl); err != nil {
					return fmt.Errorf("%w: %s row %d: env %s: %w", ErrTable, where, i, name, err)
				}
			}
			if err := checkLocal(where, r.Local); err != nil {
				return err
			}
		}
		return nil
	}
	for _, name := range sortedKeys(t.Programs) {
		p := t.Programs[name]
		if p.Alias != "" {
			if _, ok := t.Programs[p.Alias]; !ok {
				return fmt.Errorf("%w: program %s: alias %q is not in the table", ErrTable, name, p.Alias)
			}
		}
		if err := checkRows("program "+name, p.Rows); err != nil {
			return err
		}
		if err := checkLocal("program "+name, p.Local); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(t.Verbs) {
		v := t.Verbs[name]
		if !known(v.Effect) || !conf(v.Confidence) {
			return fmt.Errorf("%w: verb %s: unknown effect %q or confidence %q", ErrTable, name, v.Effect, v.Confidence)
		}
	}
	for _, name := range sortedKeys(t.Tools) {
		if err := checkRows("tool "+name, t.Tools[name]); err != nil {
			return err
		}
	}
	return nil
}

func checkLocal(where string, ls []Local) error {
	for i, l := range ls {
		switch {
		case l.Why == "":
			return fmt.Errorf("%w: %s local rule %d: why is required (the input says it)", ErrTable, where, i)
		case l.Operand != "" && l.Operand != "first" && l.Operand != "last":
			return fmt.Errorf("%w: %s local rule %d: operand %q: want first or last", ErrTable, where, i, l.Operand)
		case len(l.Options)+len(l.Env)+len(l.Absent) == 0 && l.Operand == "":
			return fmt.Errorf("%w: %s local rule %d: names no option, env, operand or absent option to read", ErrTable, where, i)
		case len(l.Absent) == 0 && len(l.Match) == 0 && !l.Loopback && !l.Reserved && !l.Workspace:
			return fmt.Errorf("%w: %s local rule %d: needs match, loopback, reserved or workspace", ErrTable, where, i)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
