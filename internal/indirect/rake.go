package indirect

import (
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// rakefile is what is read of a Rakefile: for each task, by its full
// name (db:push), its prerequisites and the shell text it hands out.
type rakefile struct {
	tasks map[string]*rakeTask
}

type rakeTask struct {
	prereqs []string
	shell   []string
}

var (
	rakeNamespace = regexp.MustCompile(`^\s*namespace\s+[:"']?([\w:-]+)["']?\s*do\b`)
	rakeTaskHead  = regexp.MustCompile(`^\s*(?:task|desc\s.*;\s*task)\s*\(?\s*[:"']?([\w-]+(?::[\w-]+)*)["']?\s*(?::|=>)?\s*(\[[^\]]*\]|[:"'][\w:-]+["']?)?`)
	rakeShellOut  = regexp.MustCompile("(?:\\b(?:sh|system|exec|ruby|spawn)\\s*\\(?\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*')|`([^`]*)`|%x\\{([^}]*)\\}|%x\\(([^)]*)\\))")
	rakeSymbol    = regexp.MustCompile(`[:"']([\w:-]+)`)
	rakeBlockOpen = regexp.MustCompile(`\bdo\b(\s*\|[^|]*\|)?\s*$|^\s*(if|unless|while|until|case|def|begin|class|module)\b`)
	rakeBlockEnd  = regexp.MustCompile(`^\s*end\b`)
)

func parseRakefile(b []byte) any {
	rf := &rakefile{tasks: map[string]*rakeTask{}}
	type frame struct {
		ns   string
		task *rakeTask
	}
	var stack []frame
	current := func() (string, *rakeTask) {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].task != nil {
				return stack[i].ns, stack[i].task
			}
		}
		return "", nil
	}
	prefix := func() string {
		var ns []string
		for _, f := range stack {
			if f.task == nil && f.ns != "" {
				ns = append(ns, f.ns)
			}
		}
		if len(ns) == 0 {
			return ""
		}
		return strings.Join(ns, ":") + ":"
	}
	for _, line := range strings.Split(string(b), "\n") {
		code := line
		if i := strings.Index(code, " #"); i >= 0 {
			code = code[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(code), "#") {
			continue
		}
		var t *rakeTask
		if m := rakeNamespace.FindStringSubmatch(code); m != nil {
			stack = append(stack, frame{ns: m[1]})
			continue
		}
		if m := rakeTaskHead.FindStringSubmatch(code); m != nil {
			full := prefix() + m[1]
			t = rf.tasks[full]
			if t == nil {
				t = &rakeTask{}
				rf.tasks[full] = t
			}
			for _, s := range rakeSymbol.FindAllStringSubmatch(m[2], -1) {
				t.prereqs = append(t.prereqs, s[1])
			}
		}
		if _, cur := current(); cur != nil || t != nil {
			target := cur
			if t != nil {
				target = t
			}
			for _, m := range rakeShellOut.FindAllStringSubmatch(code, -1) {
				for _, g := range m[1:] {
					if g != "" {
						target.shell = append(target.shell, rubyString(g))
						break
					}
				}
			}
		}
		switch {
		case rakeBlockOpen.MatchString(code):
			stack = append(stack, frame{task: t, ns: ""})
		case rakeBlockEnd.MatchString(code) && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	return rf
}

// rubyString reads a Ruby string literal; interpolations #{…} become an
// unknown shell variable.
func rubyString(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
		s = s[1 : len(s)-1]
	}
	for {
		i := strings.Index(s, "#{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			break
		}
		s = s[:i] + "${RUBY_EXPR}" + s[i+j+1:]
	}
	return strings.ReplaceAll(s, `\"`, `"`)
}

// rake resolves rake [options] [tasks…].
func (r *reader) rake(args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	file := ""
	var tasks []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(dynamic) > i+1 && dynamic[i+1] {
			return Result{Kind: "rake", Why: "the task is not known"}, true
		}
		switch {
		case a == "-f" || a == "--rakefile":
			if i+1 < len(args) {
				file = args[i+1]
				i++
			}
		case a == "-C" || a == "--directory":
			if i+1 < len(args) {
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case a == "-T" || a == "-D" || a == "-W" || a == "-P" || a == "-n" || a == "--dry-run" || a == "--tasks":
			return Result{}, false
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
		default:
			name, _, _ := strings.Cut(a, "[") // task[arg1,arg2]
			tasks = append(tasks, name)
		}
	}
	v, abs, name, why := r.definition("rake", dir, file, []string{"Rakefile", "rakefile", "Rakefile.rb", "rakefile.rb"}, parseRakefile)
	if why != "" {
		return Result{Kind: "rake", Why: why}, true
	}
	rf := v.(*rakefile)
	if len(tasks) == 0 {
		tasks = []string{"default"}
	}
	res := Result{Kind: "rake", From: name + "#" + tasks[0]}
	why = walkGraph(tasks, "tasks", func(t string, depth int, walk func(string) string) string {
		task, ok := rf.tasks[t]
		if !ok {
			if depth == 0 {
				return "no task " + quote(t) + " in " + name + " (tasks from gems and imported files are not read)"
			}
			return ""
		}
		for _, p := range task.prereqs {
			// A prerequisite is looked up in the task's namespace first.
			if i := strings.LastIndex(t, ":"); i >= 0 {
				if _, ok := rf.tasks[t[:i+1]+p]; ok {
					p = t[:i+1] + p
				}
			}
			if why := walk(p); why != "" {
				return why
			}
		}
		if len(task.shell) > 0 {
			res.Steps = append(res.Steps, Step{From: name + "#" + t, Script: strings.Join(task.shell, "\n"), Dir: path.Dir(abs), File: abs})
		}
		return ""
	})
	if why != "" {
		return Result{Kind: "rake", Why: why}, true
	}
	return res, true
}

// taskfile is what is read of a go-task Taskfile.
type taskfile struct {
	Tasks map[string]taskDef `yaml:"tasks"`
	bad   string
}

type taskDef struct {
	Cmds []taskCmd `yaml:"cmds"`
	Deps []taskDep `yaml:"deps"`
	Dir  string    `yaml:"dir"`
}

// taskCmd is a command of a task: a string, {cmd: …} or {task: …}.
type taskCmd struct {
	Cmd  string `yaml:"cmd"`
	Task string `yaml:"task"`
}

func (c *taskCmd) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		c.Cmd = n.Value
		return nil
	}
	type plain taskCmd
	return n.Decode((*plain)(c))
}

// taskDep is a dependency: a name or {task: …}.
type taskDep struct {
	Task string `yaml:"task"`
}

func (d *taskDep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		d.Task = n.Value
		return nil
	}
	type plain taskDep
	return n.Decode((*plain)(d))
}

func (d *taskDef) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode { // task: [cmd, cmd]
		return n.Decode(&d.Cmds)
	}
	if n.Kind == yaml.ScalarNode { // task: cmd
		d.Cmds = []taskCmd{{Cmd: n.Value}}
		return nil
	}
	type plain taskDef
	return n.Decode((*plain)(d))
}

func parseTaskfile(b []byte) any {
	tf := &taskfile{}
	if err := yaml.Unmarshal(b, tf); err != nil {
		return &taskfile{bad: "the Taskfile is not valid YAML"}
	}
	return tf
}

// task resolves go-task's task [options] [tasks…].
func (r *reader) task(args []string, dynamic []bool) (Result, bool) {
	dir := r.ws.Dir
	file := ""
	var tasks []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(dynamic) > i+1 && dynamic[i+1] {
			return Result{Kind: "task", Why: "the task is not known"}, true
		}
		switch {
		case a == "--":
			i = len(args)
		case a == "-t" || a == "--taskfile":
			if i+1 < len(args) {
				file = args[i+1]
				i++
			}
		case a == "-d" || a == "--dir":
			if i+1 < len(args) {
				dir = r.absFrom(dir, args[i+1])
				i++
			}
		case a == "-n" || a == "--dry" || a == "-l" || a == "--list" || a == "-a" || a == "--list-all" || a == "--summary" || a == "-i" || a == "--init":
			return Result{}, false
		case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
		default:
			tasks = append(tasks, a)
		}
	}
	v, abs, name, why := r.definition("task", dir, file, []string{"Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml", "Taskfile.dist.yml"}, parseTaskfile)
	if why != "" {
		return Result{Kind: "task", Why: why}, true
	}
	tf := v.(*taskfile)
	if tf.bad != "" {
		return Result{Kind: "task", Why: name + ": " + tf.bad}, true
	}
	if len(tasks) == 0 {
		tasks = []string{"default"}
	}
	res := Result{Kind: "task", From: name + "#" + tasks[0]}
	why = walkGraph(tasks, "tasks", func(t string, depth int, walk func(string) string) string {
		def, ok := tf.Tasks[t]
		if !ok {
			if depth == 0 {
				return "no task " + quote(t) + " in " + name + " (included Taskfiles are not read)"
			}
			return ""
		}
		for _, d := range def.Deps {
			if why := walk(d.Task); why != "" {
				return why
			}
		}
		tdir := path.Dir(abs)
		if def.Dir != "" {
			tdir = r.absFrom(tdir, def.Dir)
		}
		var lines []string
		flush := func() {
			if len(lines) > 0 {
				res.Steps = append(res.Steps, Step{From: name + "#" + t, Script: strings.Join(lines, "\n"), Dir: tdir, File: abs})
				lines = nil
			}
		}
		for _, c := range def.Cmds {
			switch {
			case c.Task != "":
				flush()
				if why := walk(c.Task); why != "" {
					return why
				}
			case c.Cmd != "":
				lines = append(lines, c.Cmd)
			}
		}
		flush()
		return ""
	})
	if why != "" {
		return Result{Kind: "task", Why: why}, true
	}
	return res, true
}
