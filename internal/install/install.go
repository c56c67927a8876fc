// Package install registers ahp-opa's native hooks in an agent's own
// settings file: merged with what is there, idempotent, reversible, with a
// backup, and with the agent's fail-closed switch on the pre-tool hook where
// it has one. On request it also registers the post-tool and session hooks,
// whose events reach the audit log; those fail open and never block (see
// ../shared/adapters/CONTRACTS.md for each agent's file, events and shape).
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/config"
	"github.com/ahp-opa/ahp-opa/internal/daemon"
	"github.com/ahp-opa/ahp-opa/internal/pathread"
	"github.com/ahp-opa/ahp-opa/internal/suggest"
)

// unknownAgent names the agents there are, and the one meant if name is
// a typo of it.
func unknownAgent(name string) error {
	names := slices.Sorted(maps.Keys(agents))
	return fmt.Errorf("%w %q: want one of %s%s", ErrUnknownAgent, name, strings.Join(names, ", "), suggest.DidYouMean(name, names))
}

// Errors callers branch on.
var (
	ErrUnknownAgent = errors.New("install: unknown agent")
	ErrUnparsable   = errors.New("install: settings file cannot be parsed")
	// ErrUnsafeFile: the settings file is not a regular file, or a
	// project's file leads out of the project.
	ErrUnsafeFile = errors.New("install: settings file refused")
	// ErrHookCommand: the hook command's own flags cannot be read.
	ErrHookCommand = errors.New("install: hook command")
)

// Scope says which settings file: the user's or the project's.
type Scope string

const (
	User    Scope = "user"
	Project Scope = "project"
)

// HookTimeout is the least timeout registered with the agent, a little
// above ahp-opa-hook's default deadline so the hook answers (fail closed)
// first.
const HookTimeout = 10 * time.Second

// timeoutMargin is how much longer than the hook's own deadline the agent
// waits: the hook's start, and its answer after the deadline.
const timeoutMargin = time.Second

// maxSettingsBytes bounds a settings file read.
const maxSettingsBytes = 4 << 20

// Options says what to install where.
type Options struct {
	Agent string
	Scope Scope
	// Home and Project locate the files (defaults: the user's home, the
	// working directory).
	Home, Project string
	// Command is the hook command line without the agent name, e.g.
	// "/usr/local/bin/ahp-opa-hook".
	Command string
	// AgentTimeout is the timeout registered with the agent; 0 takes the
	// hook's own deadline (its --timeout) plus a margin, at least
	// HookTimeout. One not above the hook's deadline is registered as
	// given, with a warning in Result.Notes.
	AgentTimeout time.Duration
	// Observe also registers the post-tool (and failure) and session start
	// and end hooks, which the agent runs once more per tool call. Without
	// it, such entries of ours from an earlier run are removed.
	Observe   bool
	Uninstall bool
	DryRun    bool
	Now       func() time.Time // for backup names
}

// Result says what was (or, with DryRun, would be) done.
type Result struct {
	Path    string
	Changed bool
	Diff    string   // unified diff of the file, "" when unchanged
	Backup  string   // the backup written before changing an existing file
	Events  []string // the hook events that hold our entry afterwards
	Notes   []string
	// Timeout is the agent timeout registered (0 uninstalling).
	Timeout time.Duration
}

// agent knows one agent's settings file and hook entries.
type agent struct {
	user, project func(home, project string) string
	// pre is the pre-tool event; observe the post-tool (and failure) and
	// session events Options.Observe adds, as CONTRACTS.md names them.
	pre     string
	observe []string
	// nested agents group handlers under {"matcher", "hooks": [...]};
	// flat ones list handlers directly under the event.
	nested     bool
	commandKey string
	// handler is our handler for cmd; guard is set for the pre-tool hook
	// only, which alone gets the agent's fail-closed switch.
	handler      func(cmd string, guard bool, timeout time.Duration) *object
	version1     bool // the file needs "version": 1
	notes        []string
	observeNotes []string
}

// failOpenFlag makes an observation hook answer "no decision" whatever
// goes wrong, so it cannot turn into a deny.
const failOpenFlag = "--fail-open"

var agents = map[string]agent{
	"claude-code": {
		user:    func(h, _ string) string { return filepath.Join(h, ".claude", "settings.json") },
		project: func(_, p string) string { return filepath.Join(p, ".claude", "settings.json") },
		pre:     "PreToolUse",
		observe: []string{"PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd"},
		nested:  true, commandKey: "command",
		handler: func(cmd string, guard bool, timeout time.Duration) *object {
			h := pairs("type", "command", "command", cmd, "timeout", seconds(timeout))
			if guard {
				// onFailure "block": a hook that cannot start or times out blocks.
				h.set("onFailure", mustRaw("block"))
			}
			return h
		},
		notes: []string{"onFailure \"block\" needs Claude Code 2.1.295 or later; older versions ignore it and the hook's own deny still applies"},
	},
	"codex": {
		user:    func(h, _ string) string { return filepath.Join(h, ".codex", "hooks.json") },
		project: func(_, p string) string { return filepath.Join(p, ".codex", "hooks.json") },
		pre:     "PreToolUse",
		observe: []string{"PostToolUse", "SessionStart"},
		nested:  true, commandKey: "command",
		handler: func(cmd string, _ bool, timeout time.Duration) *object {
			return pairs("type", "command", "command", cmd, "timeout", seconds(timeout))
		},
		notes: []string{
			"Codex runs a new or changed hook only after you trust it (/hooks, or --dangerously-bypass-hook-trust)",
			"Codex has no fail-closed switch: ahp-opa-hook answers a deny itself when it cannot decide",
		},
		observeNotes: []string{"Codex has no session-end hook (and no separate failure hook: PostToolUse also follows failed commands), so the audit log records session starts only"},
	},
	"gemini-cli": {
		user:    func(h, _ string) string { return filepath.Join(h, ".gemini", "settings.json") },
		project: func(_, p string) string { return filepath.Join(p, ".gemini", "settings.json") },
		pre:     "BeforeTool",
		observe: []string{"AfterTool", "SessionStart", "SessionEnd"},
		nested:  true, commandKey: "command",
		handler: func(cmd string, _ bool, timeout time.Duration) *object {
			return pairs("type", "command", "command", cmd, "name", "ahp-opa", "timeout", timeout.Milliseconds()) // milliseconds
		},
		notes: []string{"Gemini CLI has no fail-closed switch: ahp-opa-hook answers a deny itself when it cannot decide"},
	},
	"cursor": {
		user:       func(h, _ string) string { return filepath.Join(h, ".cursor", "hooks.json") },
		project:    func(_, p string) string { return filepath.Join(p, ".cursor", "hooks.json") },
		pre:        "preToolUse",
		observe:    []string{"postToolUse", "postToolUseFailure", "sessionStart", "sessionEnd"},
		commandKey: "command", version1: true,
		handler: func(cmd string, guard bool, timeout time.Duration) *object {
			h := pairs("type", "command", "command", cmd, "timeout", seconds(timeout))
			if guard {
				h.set("failClosed", mustRaw(true))
			}
			return h
		},
	},
	"copilot": {
		user: func(h, _ string) string {
			if ch := os.Getenv("COPILOT_HOME"); ch != "" {
				return filepath.Join(ch, "hooks", "ahp-opa.json")
			}
			return filepath.Join(h, ".copilot", "hooks", "ahp-opa.json")
		},
		project:    func(_, p string) string { return filepath.Join(p, ".github", "hooks", "ahp-opa.json") },
		pre:        "preToolUse",
		observe:    []string{"postToolUse", "postToolUseFailure", "sessionStart", "sessionEnd"},
		commandKey: "bash", version1: true,
		handler: func(cmd string, _ bool, timeout time.Duration) *object {
			return pairs("type", "command", "bash", cmd, "timeoutSec", seconds(timeout))
		},
		notes: []string{"Copilot has no fail-closed switch: ahp-opa-hook answers a deny itself when it cannot decide"},
	},
}

// Path returns the settings file Apply would edit.
func Path(o Options) (string, error) {
	a, ok := agents[o.Agent]
	if !ok {
		return "", unknownAgent(o.Agent)
	}
	switch o.Scope {
	case User, "":
		if o.Home == "" {
			return "", errors.New("install: no home directory")
		}
		return a.user(o.Home, o.Project), nil
	case Project:
		if o.Project == "" {
			return "", errors.New("install: no project directory")
		}
		return a.project(o.Home, o.Project), nil
	}
	return "", fmt.Errorf("install: scope %q: want user or project", o.Scope)
}

// Apply installs (or with Uninstall removes) the hook entry. A file it
// cannot parse is left untouched and reported with ErrUnparsable.
func Apply(o Options) (Result, error) {
	a, ok := agents[o.Agent]
	if !ok {
		return Result{}, unknownAgent(o.Agent)
	}
	path, err := Path(o)
	if err != nil {
		return Result{}, err
	}
	// Edit the file a symlink points at, not the link (dotfile managers);
	// but a project's file must stay in the project: a repository that
	// links its settings file (or directory) elsewhere must not get a file
	// outside it rewritten.
	real, err := resolve(path)
	if err != nil {
		return Result{Path: path}, fmt.Errorf("install: %w", err)
	}
	if o.Scope == Project {
		if err := inside(path, real, o.Project); err != nil {
			return Result{Path: path}, err
		}
	}
	path = real
	res := Result{Path: path}
	var add []entry
	if !o.Uninstall {
		cmd := strings.TrimSpace(o.Command)
		if !IsOurCommand(cmd) {
			// Its entry could not be told from the agent's others again:
			// a second install would add another, --uninstall none.
			return res, fmt.Errorf("%w %q: it must run ahp-opa-hook or 'ahp-opa hook' (perhaps after env and NAME=value), or its entry could never be updated or removed", ErrHookCommand, cmd)
		}
		deadline, warning, err := hookDeadline(cmd)
		if err != nil {
			return res, err
		}
		if warning != "" {
			res.Notes = append(res.Notes, "warning: "+warning)
		}
		res.Timeout = max(HookTimeout, deadline+timeoutMargin)
		if o.AgentTimeout > 0 {
			res.Timeout = o.AgentTimeout
			if o.AgentTimeout < deadline+timeoutMargin {
				res.Notes = append(res.Notes, fmt.Sprintf("warning: the agent timeout %s is not above the hook's own deadline %s plus %s: when the hook needs its whole time the agent kills it first and %s", o.AgentTimeout, deadline, timeoutMargin, killedMeans[o.Agent]))
			}
		}
		add = a.entries(cmd, o.Agent, o.Observe, res.Timeout)
		for _, e := range add {
			res.Events = append(res.Events, e.event)
		}
		res.Notes = append(res.Notes, a.notes...)
		if o.Observe {
			res.Notes = append(res.Notes, fmt.Sprintf("the %s hooks start one more hook process per tool call and one at session start and end; they fail open and answer \"no decision\", so they never block", strings.Join(a.observe, ", ")))
			res.Notes = append(res.Notes, a.observeNotes...)
		}
	}
	old, existed, err := readBounded(path)
	if err != nil {
		return res, err
	}
	var owner *ownership
	if existed {
		if owner, err = ownerOf(path); err != nil {
			return res, fmt.Errorf("install: %w; nothing was changed", err)
		}
	}
	doc := newObject()
	indent := "  "
	if existed && strings.TrimSpace(string(old)) != "" {
		if doc, err = parseObject(old); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				err = fmt.Errorf("%w (at byte %d)", err, se.Offset)
			}
			return res, fmt.Errorf("%w: %s: %w; nothing was changed", ErrUnparsable, path, err)
		}
		indent = indentOf(old)
	}
	before := encode(doc, indent)
	err = a.edit(doc, add, o.Uninstall)
	if err != nil {
		return res, fmt.Errorf("%w: %s: %w; nothing was changed", ErrUnparsable, path, err)
	}
	after := encode(doc, indent)
	if string(after) == string(before) {
		return res, nil // already as wanted: no write, no backup
	}
	res.Changed = true
	res.Diff = unifiedDiff(path, string(old), string(after))
	if o.DryRun {
		return res, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if o.Scope != Project {
		mode = 0o600
	}
	// The new content is staged first, with the file's owner, group and
	// mode (a new file: those of its directory's owner, as when root
	// installs for another user's HOME), so that a failure leaves the
	// file as it was.
	tmp, err := stage(path, after, mode, owner)
	if err != nil {
		return res, fmt.Errorf("install: %w; nothing was changed", err)
	}
	if existed {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		if res.Backup, err = backup(path, old, now(), owner); err != nil {
			os.Remove(tmp)
			return res, fmt.Errorf("install: backup: %w; nothing was changed", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("install: %w", err)
	}
	return res, nil
}

// backupSuffix joins a settings file's name and the time of its backup.
const backupSuffix = ".ahp-opa-backup-"

// maxBackupsCompared bounds the earlier backups read to find one that
// already holds content: a directory of thousands must not slow install.
const maxBackupsCompared = 32

// backup keeps content, the file at path before a change: in an earlier
// backup that holds the same bytes, else in a new one. Installing and
// uninstalling again and again so leaves two backups, not one per run.
func backup(path string, content []byte, now time.Time, owner *ownership) (string, error) {
	dir, base := filepath.Split(path)
	if entries, err := os.ReadDir(filepath.Clean(dir)); err == nil {
		compared := 0
		for _, e := range slices.Backward(entries) { // newest first: the names sort by time
			if !strings.HasPrefix(e.Name(), base+backupSuffix) || !e.Type().IsRegular() {
				continue
			}
			if compared++; compared > maxBackupsCompared {
				break
			}
			p := filepath.Join(dir, e.Name())
			if b, ok, err := readBounded(p); err == nil && ok && bytes.Equal(b, content) {
				return p, nil
			}
		}
	}
	name := path + backupSuffix + now.UTC().Format("20060102T150405.000000000Z")
	return name, writeNew(name, content, 0o600, owner)
}

// killedMeans is what an agent does with a call whose hook it killed.
var killedMeans = map[string]string{
	"claude-code": "Claude Code blocks the call (onFailure \"block\"; older versions run it)",
	"codex":       "Codex runs the call",
	"gemini-cli":  "Gemini CLI runs the call",
	"cursor":      "Cursor blocks the call (failClosed)",
	"copilot":     "Copilot runs the call",
}

// seconds rounds a timeout up to whole seconds, so that it never ends up
// below the hook's deadline.
func seconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// HookDeadline is the hook command's own deadline for one answer: its
// --timeout, else the default of ahp-opa-hook (daemon.DefaultHookTimeout)
// or of 'ahp-opa hook' (adapters.DefaultTimeout), whose hook.timeout a
// --config file or an AHP_OPA_HOOK__TIMEOUT assignment before the command
// may set instead. A --timeout that does not parse is an error: that hook
// would deny every call.
func HookDeadline(cmd string) (time.Duration, error) {
	d, _, err := hookDeadline(cmd)
	return d, err
}

// hookDeadline is HookDeadline, with a warning when the deadline is a
// guess: the command is not one of ours, or its configuration file could
// not be read.
func hookDeadline(cmd string) (deadline time.Duration, warning string, err error) {
	f := strings.Fields(cmd)
	// The environment a shell sets up for the command: "env" and NAME=value.
	var environ []string
	if len(f) > 0 && filepath.Base(f[0]) == "env" {
		f = f[1:]
	}
	for len(f) > 0 && assignment(f[0]) {
		environ = append(environ, strings.Trim(f[0], `'"`))
		f = f[1:]
	}
	deadline, args := daemon.DefaultHookTimeout, f
	if len(f) > 0 {
		args = f[1:]
	}
	full := len(f) > 1 && f[1] == "hook" && filepath.Base(strings.Trim(f[0], `'"`)) == "ahp-opa"
	if full {
		deadline, args = adapters.DefaultTimeout, f[2:]
	}
	flag, configPath := false, ""
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			configPath = v
		} else if a == "--config" && i+1 < len(args) {
			configPath = args[i+1]
		}
		if a == "-timeout" || strings.HasPrefix(a, "-timeout=") {
			return 0, "", fmt.Errorf("%w %q: write --timeout: neither hook knows -timeout, so it would refuse every call", ErrHookCommand, cmd)
		}
		v, ok := strings.CutPrefix(a, "--timeout=")
		if a == "--timeout" {
			if i+1 == len(args) {
				return 0, "", fmt.Errorf("%w %q: --timeout needs a value", ErrHookCommand, cmd)
			}
			v, ok = args[i+1], true
		}
		if !ok {
			continue
		}
		d, err := time.ParseDuration(strings.Trim(v, `'"`))
		if err != nil || d <= 0 {
			return 0, "", fmt.Errorf("%w %q: --timeout %q is not a positive duration such as 20s", ErrHookCommand, cmd, v)
		}
		deadline, flag = d, true
	}
	if !full || flag || configPath == "" && len(environ) == 0 {
		return deadline, warning, nil
	}
	// 'ahp-opa hook' reads hook.timeout from its file and environment as
	// it will when the agent runs it.
	configPath = strings.Trim(configPath, `'"`)
	cfg, err := config.Load(nil, configPath, func() []string { return environ })
	if err != nil {
		where := configPath
		if where == "" {
			where = "its environment"
		}
		return deadline, fmt.Sprintf("the hook's deadline could not be read from %s (it is taken as %s): pass --agent-timeout above its hook.timeout", where, deadline), nil
	}
	return cfg.Hook.Timeout, "", nil
}

// assignment reports a shell's NAME=value word before a command.
func assignment(word string) bool {
	name, _, ok := strings.Cut(strings.TrimLeft(word, `'"`), "=")
	return ok && name != "" && !strings.ContainsAny(name, "/-.") && name[0] != '-'
}

// resolve follows the symlinks of path, which need not exist: those of
// its deepest existing ancestor, the rest joined on; a dangling link is
// followed to where it points, since writing through it creates its
// target.
func resolve(path string) (string, error) {
	var rest []string
	p := path
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > 40 {
				return "", fmt.Errorf("%s: too many levels of symbolic links", path)
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = target
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// inside refuses a project settings file whose real place (symlinks
// followed) is outside the project.
func inside(path, real, project string) error {
	root, err := filepath.EvalSymlinks(project)
	if err != nil {
		return fmt.Errorf("install: project %s: %w", project, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s leads to %s, outside the project %s (a symbolic link); nothing was changed", ErrUnsafeFile, path, real, project)
	}
	return nil
}

// entry is one handler of ours under one hook event.
type entry struct {
	event   string
	handler *object
}

// entries are the handlers to install for cmd: the pre-tool hook and, with
// observe, the observation hooks. These run with --fail-open and without
// the fail-closed switch: the tool has already run or the session is
// starting or ending, so a failure there must not stop the agent.
func (a agent) entries(cmd, agentName string, observe bool, timeout time.Duration) []entry {
	es := []entry{{a.pre, a.handler(cmd+" "+agentName, true, timeout)}}
	if !observe {
		return es
	}
	obs := cmd
	if !slices.Contains(strings.Fields(cmd), failOpenFlag) {
		obs += " " + failOpenFlag
	}
	for _, ev := range a.observe {
		es = append(es, entry{ev, a.handler(obs+" "+agentName, false, timeout)})
	}
	return es
}

// edit removes every handler of ours from the events of add or,
// uninstalling, from every event, then appends the handlers of add. A
// plain install thus leaves observation hooks (from --observe, or written
// by hand) as they are: running it to update the pre-tool hook must not
// switch the audit trail off.
func (a agent) edit(doc *object, add []entry, uninstall bool) error {
	hooks, err := doc.subObject("hooks")
	if err != nil {
		return err
	}
	var managed []string
	for _, e := range add {
		if !slices.Contains(managed, e.event) {
			managed = append(managed, e.event)
		}
	}
	if uninstall {
		managed = append([]string{a.pre}, a.observe...)
	}
	events := slices.Clone(managed)
	removed := false // a handler of ours was taken out
	if uninstall {
		for _, ev := range hooks.keys {
			if !slices.Contains(events, ev) {
				events = append(events, ev)
			}
		}
	}
	for _, ev := range events {
		list, err := hooks.array(ev)
		if err != nil {
			if !slices.Contains(managed, ev) {
				continue // not a list of hooks: nothing of ours is in it
			}
			return err
		}
		var kept []json.RawMessage
		ours := false
		for _, item := range list {
			keep, had := a.strip(item)
			ours = ours || had
			if keep != nil {
				kept = append(kept, keep)
			}
		}
		if !ours {
			continue
		}
		removed = true
		if len(kept) > 0 {
			hooks.set(ev, mustRaw(kept))
		} else {
			hooks.del(ev)
		}
	}
	for _, e := range add {
		list, _ := hooks.array(e.event) // checked above
		if a.nested {
			list = append(list, mustRaw(pairs("matcher", "*", "hooks", []any{e.handler})))
		} else {
			list = append(list, mustRaw(e.handler))
		}
		hooks.set(e.event, mustRaw(list))
	}
	if len(add) > 0 && a.version1 {
		if _, ok := doc.get("version"); !ok {
			doc.set("version", json.RawMessage("1"))
		}
	}
	switch _, had := doc.get("hooks"); {
	case uninstall && removed && len(hooks.keys) == 0:
		// Emptied by taking ours out: leave no {"hooks": {}} behind.
		doc.del("hooks")
	case had || len(hooks.keys) > 0:
		doc.set("hooks", mustRaw(hooks))
	}
	return nil
}

// strip returns item minus our handlers, and whether it held any: nil
// when nothing is left of a group that held ours, item itself (same
// bytes) when it held none.
func (a agent) strip(item json.RawMessage) (json.RawMessage, bool) {
	if !a.nested {
		if a.isOurs(item) {
			return nil, true
		}
		return item, false
	}
	group, err := parseObject(item)
	if err != nil {
		return item, false // not a group we understand: leave it alone
	}
	handlers, err := group.array("hooks")
	if err != nil {
		return item, false
	}
	var kept []json.RawMessage
	for _, h := range handlers {
		if !a.isOurs(h) {
			kept = append(kept, h)
		}
	}
	switch {
	case len(kept) == len(handlers):
		return item, false
	case len(kept) == 0:
		return nil, true
	}
	group.set("hooks", mustRaw(kept))
	return mustRaw(group), true
}

func (a agent) isOurs(h json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(h, &m) != nil {
		return false
	}
	cmd, _ := m[a.commandKey].(string)
	return IsOurCommand(cmd)
}

// IsOurCommand says whether a hook command line runs ahp-opa's hook:
// `ahp-opa-hook …` or `ahp-opa hook …`, by any path.
func IsOurCommand(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	// The environment a shell sets up first: "env" and NAME=value words.
	if rest, ok := strings.CutPrefix(cmd, "env "); ok {
		cmd = strings.TrimSpace(rest)
	}
	for {
		word, rest, _ := strings.Cut(cmd, " ")
		if !assignment(word) {
			break
		}
		cmd = strings.TrimSpace(rest)
	}
	var exe, rest string
	if len(cmd) > 0 && (cmd[0] == '\'' || cmd[0] == '"') {
		end := strings.IndexByte(cmd[1:], cmd[0])
		if end < 0 {
			return false
		}
		exe, rest = cmd[1:1+end], cmd[2+end:]
	} else {
		exe, rest, _ = strings.Cut(cmd, " ")
	}
	switch filepath.Base(exe) {
	case "ahp-opa-hook":
		return true
	case "ahp-opa":
		f := strings.Fields(rest)
		return len(f) > 0 && f[0] == "hook"
	}
	return false
}

// QuoteCommand quotes a path for a shell command line when it needs it.
func QuoteCommand(path string) string {
	if strings.ContainsAny(path, " \t'\"$`\\;&|<>()*?[]#~") {
		return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return path
}

// readBounded reads the settings file with pathread's bounds: a FIFO, a
// device or a directory in its place is refused at once, not waited on.
func readBounded(path string) ([]byte, bool, error) {
	b, err := pathread.Read(path, pathread.Limits{MaxBytes: maxSettingsBytes})
	switch {
	case err == nil:
		return b, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, pathread.ErrTooLarge):
		return nil, true, fmt.Errorf("%w: %w; nothing was changed", ErrUnparsable, err)
	case errors.Is(err, pathread.ErrNotRegular):
		return nil, true, fmt.Errorf("%w: %w; nothing was changed", ErrUnsafeFile, err)
	}
	return nil, true, fmt.Errorf("install: %w; nothing was changed", err)
}

func writeNew(path string, b []byte, mode os.FileMode, owner *ownership) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = owner.apply(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// stage writes b to a temporary file beside path, with mode and owner (nil:
// the owner of the directory), creating missing directories with the
// owner of the directory they are made in. The caller renames it into
// place, so an agent never reads a half-written settings file.
func stage(path string, b []byte, mode os.FileMode, owner *ownership) (string, error) {
	dir := filepath.Dir(path)
	if err := mkdirOwned(dir); err != nil {
		return "", err
	}
	if owner == nil {
		o, err := ownerOf(dir)
		if err != nil {
			return "", err
		}
		owner = o
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".ahp-opa-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = owner.apply(f)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return "", werr
	}
	return tmp, nil
}

// mkdirOwned creates dir and its missing parents, each given the owner
// and group of the directory it is made in.
func mkdirOwned(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirOwned(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	o, err := ownerOf(parent)
	if err == nil {
		err = o.chown(dir)
	}
	return err
}
