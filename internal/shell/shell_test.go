package shell

import (
	"slices"
	"strings"
	"testing"
)

// describe renders commands as "name: argv" lines, with the wrappers, the
// depth and how a nested command is reached when they are set.
func describe(a *Analysis) []string {
	var out []string
	for _, c := range a.Commands {
		s := c.Name + ": " + strings.Join(c.Argv, " ")
		if len(c.Wrappers) > 0 {
			s += " [" + strings.Join(c.Wrappers, ",") + "]"
		}
		if c.Via != "" {
			s += " <" + c.Via + ">"
		}
		out = append(out, s)
	}
	return out
}

func TestConstructs(t *testing.T) {
	tests := []struct {
		script string
		want   []string
	}{
		{"ls -la", []string{"ls: ls -la"}},
		{"a; b && c || d & e", []string{"a: a", "b: b", "c: c", "d: d", "e: e"}},
		{"a | b |& c", []string{"a: a", "b: b", "c: c"}},
		{"(a; b) && { c; }", []string{"a: a", "b: b", "c: c"}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a: a", "b: b", "c: c", "d: d", "e: e"}},
		{"while a; do b; done; until c; do d; done", []string{"a: a", "b: b", "c: c", "d: d"}},
		{"for x in 1 2; do echo $x; done", []string{"echo: echo 1", "echo: echo 2"}},
		{"for x in $(ls); do echo $x; done", []string{"ls: ls <command-substitution>", "echo: echo $x"}},
		// Make's variables in a recipe copied to the shell are values,
		// not programs named SUDO; lower-case and argument-taking
		// substitutions still run.
		// An unknown variable prefix: what follows is read as if it were empty.
		{"$(SUDO) $(DOCKER) build .", []string{"${sudo}: ${SUDO} ${DOCKER} build .", "docker: docker build . <variable-prefix>"}},
		{"$(GO_BIN2) test", []string{"${go_bin2}: ${GO_BIN2} test", "test: test <variable-prefix>"}},
		{"$(whoami) x", []string{"$(whoami): $(whoami) x", "whoami: whoami <command-substitution>"}},
		{"$(SUDO -n) ls", []string{"$(sudo -n): $(SUDO -n) ls", "sudo: SUDO -n <command-substitution>"}},
		{"case $x in a) b;; *) c;; esac", []string{"b: b", "c: c"}},
		{"f() { a; }; f", []string{"f: f", "a: a"}},
		{"f() { a; }", []string{"a: a"}},
		{"echo $(date) `whoami`", []string{"echo: echo $(date) `whoami`", "date: date <command-substitution>", "whoami: whoami <command-substitution>"}},
		{"diff <(a) >(b)", []string{"diff: diff <(a) >(b)", "a: a <process-substitution>", "b: b <process-substitution>"}},
		{"[[ -n $(a) ]] && (( $(b) ))", []string{"a: a <command-substitution>", "b: b <command-substitution>"}},
		{"time a; coproc b", []string{"a: a", "b: b"}},
		{"> out.txt", []string{": "}},
		{"export -p; declare -x A=1", []string{"export: export -p", "declare: declare -x A=1"}},
		{"# only a comment", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			if a.ParseError != "" || a.Incomplete != "" {
				t.Fatalf("parse error %q, incomplete %q", a.ParseError, a.Incomplete)
			}
			if got := describe(a); !slices.Equal(got, tt.want) {
				t.Errorf("commands:\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

// TestEvasions lists rewrites of dangerous commands: each must still show
// the command it runs.
func TestEvasions(t *testing.T) {
	tests := []struct {
		script string
		want   string // one of the described commands
	}{
		{"/bin/rm -rf /", "rm: /bin/rm -rf /"},
		// a literal decoded on its way into a shell is the script it runs
		{"echo cm0gLXJmIH4K | base64 -d | sh", "rm: rm -rf ~ <shell>"},
		{"printf '%s' cm0gLXJmIH4K | base64 --decode | bash", "rm: rm -rf ~ <shell>"},
		{`\rm -rf /`, "rm: rm -rf /"},
		{"r''m -rf /", "rm: rm -rf /"},
		{`"r"m -rf /`, "rm: rm -rf /"},
		{`$'\x72\x6d' -rf /`, "rm: rm -rf /"},
		{`$'\162\155' -rf /`, "rm: rm -rf /"},
		{"{rm,-rf,/}", "rm: rm -rf /"},
		{"RM -rf /", "rm: RM -rf /"},
		{"rm.exe -rf /", "rm: rm.exe -rf /"},
		{"rm -rf \\\n /", "rm: rm -rf /"},
		{"bash -c 'rm -rf /'", "rm: rm -rf / <shell>"},
		{"sh -c \"rm -rf ~\"", "rm: rm -rf ~ <shell>"},
		{"zsh -lc 'rm -rf /'", "rm: rm -rf / <shell>"},
		{`bash -c "bash -c 'rm -rf /'"`, "rm: rm -rf / <shell>"},
		{"sudo env rm -rf /", "rm: rm -rf / [sudo,env]"},
		{"sudo -u root -- env -i FOO=1 nice -n 5 timeout 5s rm -rf /", "rm: rm -rf / [sudo,env,nice,timeout]"},
		{"FOO=1 rm -rf /", "rm: rm -rf /"},
		{"ls && rm -rf ~", "rm: rm -rf ~"},
		{"echo $(rm -rf /)", "rm: rm -rf / <command-substitution>"},
		{"cat <(rm -rf /)", "rm: rm -rf / <process-substitution>"},
		{"find . | xargs rm -rf", "rm: rm -rf . [xargs]"},
		{"xargs -I{} -n 1 rm -rf {}", "rm: rm -rf {} [xargs]"},
		{"find / -exec rm -rf {} \\;", "rm: rm -rf / <find-exec>"},
		{"X=/; rm -rf $X", "rm: rm -rf /"},
		{"X=/; export Y=$X; rm -rf \"$Y\"", "rm: rm -rf /"},
		{"rm -rf ${D:-/}", "rm: rm -rf /"},
		{`C="rm -rf /"; $C`, "rm: rm -rf /"},
		{"X=/ sh -c 'rm -rf $X'", "rm: rm -rf / <shell>"},
		{"eval 'rm -rf /'", "rm: rm -rf / <eval>"},
		{"echo 'rm -rf /' | sh", "rm: rm -rf / <shell>"},
		{"printf 'rm -rf /\\n' | bash -s", "rm: rm -rf / <shell>"},
		{"bash <<< 'rm -rf /'", "rm: rm -rf / <shell>"},
		{"bash <<EOF\nrm -rf /\nEOF", "rm: rm -rf / <shell>"},
		{"$(echo rm) -rf /", "rm: rm -rf /"},
		{"$(echo cm0gLXJmIC8= | base64 -d)", "rm: rm -rf /"},
		{"env -S 'rm -rf /'", "rm: rm -rf / [env]"},
		{"busybox rm -rf /", "rm: rm -rf / [busybox]"},
		{"command rm -rf /", "rm: rm -rf / [command]"},
		{"exec rm -rf /", "rm: rm -rf / [exec]"},
		{"su -c 'rm -rf /'", "rm: rm -rf / <shell>"},
		{"watch -n 1 rm -rf /", "rm: rm -rf / <shell>"},
		{"trap 'rm -rf /' EXIT", "rm: rm -rf / <trap>"},
		{"alias ls='rm -rf /'", "rm: rm -rf / <alias>"},
		{"rm -rf /\nls )", "rm: rm -rf /"}, // statements before a syntax error still run
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			got := describe(Analyze(tt.script, DefaultLimits))
			if !slices.Contains(got, tt.want) {
				t.Errorf("commands %q do not include %q", got, tt.want)
			}
		})
	}
}

// TestLookalikes lists commands that only mention a dangerous one: no rm
// may run.
func TestLookalikes(t *testing.T) {
	for _, script := range []string{
		`echo "rm -rf /"`,
		`git commit -m "rm -rf / was a bad idea"`,
		`grep -rn 'rm -rf /' .`,
		`echo 'echo $(rm -rf /)'`,
		"# rm -rf /",
		"cat <<'EOF'\nrm -rf /\nEOF",
		"command -v rm",
		"printf '%s\\n' 'sudo rm -rf ~'",
	} {
		t.Run(script, func(t *testing.T) {
			for _, c := range Analyze(script, DefaultLimits).Commands {
				if c.Name == "rm" || c.Name == "sudo" {
					t.Errorf("found %s: %q", c.Name, c.Argv)
				}
			}
		})
	}
}

func TestDataFlow(t *testing.T) {
	a := Analyze("curl -s x | tee f | sh; X=$(wget -qO- y); eval \"$X\"; bash <(curl z)", DefaultLimits)
	byName := map[string][]int{}
	for i, c := range a.Commands {
		byName[c.Name] = append(byName[c.Name], i)
	}
	inputs := func(name string) []string {
		var out []string
		for _, i := range a.Commands[byName[name][0]].Inputs {
			out = append(out, a.Commands[i].Name)
		}
		return out
	}
	if got := inputs("sh"); !slices.Equal(got, []string{"curl", "tee"}) {
		t.Errorf("sh inputs = %q", got)
	}
	if got := inputs("eval"); !slices.Equal(got, []string{"wget"}) {
		t.Errorf("eval inputs = %q", got)
	}
	if got := inputs("bash"); !slices.Equal(got, []string{"curl"}) {
		t.Errorf("bash inputs = %q", got)
	}
	curl := a.Commands[byName["curl"][1]]
	if curl.Via != ViaProcessSubst || a.Commands[curl.Parent].Name != "bash" {
		t.Errorf("curl in <(…): via %q parent %d", curl.Via, curl.Parent)
	}
}

func TestRedirectsAndDirs(t *testing.T) {
	a := Analyze("cd ~/.ssh && cat id_rsa > /tmp/k 2>&1 < in; psql <<'SQL'\nDROP TABLE x;\nSQL", DefaultLimits)
	cat := a.Commands[1]
	if cat.Dir != "~/.ssh" {
		t.Errorf("dir = %q", cat.Dir)
	}
	want := []Redirect{{Op: ">", Target: "/tmp/k"}, {Op: "<", Target: "in"}}
	if !slices.Equal(cat.Redirects, want) {
		t.Errorf("redirects = %+v, want %+v", cat.Redirects, want)
	}
	if !cat.Redirects[0].Writes() || cat.Redirects[1].Writes() {
		t.Error("Writes is wrong")
	}
	if psql := a.Commands[2]; len(psql.Redirects) != 1 || psql.Redirects[0].Body != "DROP TABLE x;\n" {
		t.Errorf("heredoc = %+v", psql.Redirects)
	}
}

func TestArgv(t *testing.T) {
	a := AnalyzeArgv([]string{"bash", "-lc", "git push -f && rm -rf ~"}, DefaultLimits)
	want := []string{"bash: bash -lc git push -f && rm -rf ~", "git: git push -f <shell>", "rm: rm -rf ~ <shell>"}
	if got := describe(a); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Quotes in an argv element are data, not shell syntax.
	if got := describe(AnalyzeArgv([]string{"git", "commit", "-m", "a 'b' $(c)"}, DefaultLimits)); len(got) != 1 {
		t.Errorf("got %q", got)
	}
}

func TestLimits(t *testing.T) {
	deep := "ls"
	for range 12 {
		deep = "echo $(" + deep + ")"
	}
	tests := []struct {
		name       string
		script     string
		incomplete string
		still      string // a command that must still be found
	}{
		{"depth", "rm -rf ~; " + deep, "nested deeper", "rm: rm -rf ~"},
		{"bash -c depth", strings.Repeat("bash -c '", 1) + "ls'", "", "ls: ls <shell>"},
		{"size", "echo " + strings.Repeat("a", DefaultLimits.MaxBytes), "longer than", ""},
		{"commands", strings.Repeat("a;", DefaultLimits.MaxCommands+5), "more than", "a: a"},
		{"braces", "echo {1..9}{1..9}{1..9}{1..9}; git push -f", "brace expansion", "git: git push -f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			if !strings.Contains(a.Incomplete, tt.incomplete) || (tt.incomplete == "" && a.Incomplete != "") {
				t.Errorf("incomplete = %q, want %q", a.Incomplete, tt.incomplete)
			}
			if len(a.Commands) > DefaultLimits.MaxCommands {
				t.Errorf("%d commands listed, limit %d", len(a.Commands), DefaultLimits.MaxCommands)
			}
			if tt.still != "" && !slices.Contains(describe(a), tt.still) {
				t.Errorf("%q not found", tt.still)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, script := range []string{"echo 'open", "if true; then", "ls )", "bash -c 'fi'"} {
		if a := Analyze(script, DefaultLimits); a.ParseError == "" {
			t.Errorf("%q: no parse error", script)
		}
	}
	// Text echoed into a shell may be prose: no error for it.
	if a := Analyze("echo \"it's done\" | sh", DefaultLimits); a.ParseError != "" {
		t.Errorf("parse error %q", a.ParseError)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"/usr/bin/Git": "git", `C:\bin\rm.exe`: "rm", "mkfs.ext4": "mkfs.ext4", "": ""} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
