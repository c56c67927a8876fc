# METADATA
# title: Minimal shell command splitting
# description: |
#   Just enough shell syntax for the starter rules: a command string is cut
#   into simple commands at ; & && || | |& ( ) and newlines, quotes are kept
#   together while cutting and then dropped, and leading wrappers such as sudo,
#   env or FOO=bar are skipped to find the command actually run. One level of
#   `sh -c '<script>'` is unwrapped. This is not a shell parser: expansions,
#   heredocs, aliases and functions are not understood.
package ahp.lib.shell

import data.ahp.lib.tools

# A token is an operator or a word. A word is a run of quoted strings,
# backslash escapes, fd redirections such as 2>&1 or &>file, and any other
# characters that are neither blanks nor operators.
_token_re := `(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[<>]&|&>|[^\s;&|()'"])+|&&|\|\||\|&|[;&|()\n]`

_operator_re := `^(?:&&|\|\||\|&|[;&|()\n])$`

# Commands that run the command given as their arguments.
_wrappers := {
	"builtin", "command", "doas", "env", "exec", "ionice", "nice",
	"nohup", "stdbuf", "sudo", "time", "timeout", "xargs",
}

# Shell keywords that can stand before a command: `then rm -rf x`, `! false`.
_keywords := {"!", "{", "do", "elif", "else", "if", "then", "until", "while"}

# Options of sudo and env that take a separate value (sudo -u root).
_wrapper_value_options := {"-u", "-g", "-C", "-D", "-p", "-r", "-t", "-U", "-T"}

# Programs treated as shells, both for `curl | sh` and for `sh -c '...'`.
shells := {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"}

# tokens splits a script into words and operators, keeping quoted strings
# whole. Backslash-newline continuations are joined first.
tokens(script) := regex.find_n(_token_re, regex.replace(script, `\\\r?\n`, " "), -1)

# unquote drops backslash escapes and quote characters from a word:
# "$HOME" -> $HOME, \rm -> rm, 'a b' -> a b.
unquote(word) := replace(replace(regex.replace(word, `\\(.)`, "$1"), `"`, ""), "'", "")

basename(word) := regex.replace(word, `^.*/`, "")

# segments cuts a script into simple commands, in order. Each is an object
# with "words" (unquoted) and "op", the operator that precedes it ("" for the
# first).
segments(script) := segs if {
	toks := tokens(script)
	ops := [i | some i, t in toks; regex.match(_operator_re, t)]
	bounds := array.concat(array.concat([-1], ops), [count(toks)])
	segs := [seg |
		some k in numbers.range(0, count(bounds) - 2)
		words := array.slice(toks, bounds[k] + 1, bounds[k + 1])
		count(words) > 0
		seg := {"op": _token_at(toks, bounds[k]), "words": [unquote(w) | some w in words]}
	]
}

_token_at(_, i) := "" if i < 0

_token_at(toks, i) := toks[i] if i >= 0

# simple_command finds the program a list of words runs, skipping variable
# assignments and wrappers with their options: `sudo -u root rm -rf x` gives
# {"name": "rm", "args": ["-rf", "x"]}. The name is a basename: /bin/rm -> rm.
simple_command(words) := {"name": basename(words[i]), "args": array.slice(words, i + 1, count(words))} if {
	i := min({j | some j, _ in words; not _prefix_word(words, j)})
}

_prefix_word(words, i) if regex.match(`^[A-Za-z_][A-Za-z0-9_]*=`, words[i])

_prefix_word(words, i) if words[i] in _keywords

_prefix_word(words, i) if {
	basename(words[i]) in _wrappers
	not _command_lookup(words, i)
}

# Options of a wrapper, and numbers such as `nice -n 10` or `timeout 5s`.
_prefix_word(words, i) if {
	i > 0
	startswith(words[i], "-")
}

_prefix_word(words, i) if {
	i > 0
	regex.match(`^[0-9][0-9.]*[smhd]?$`, words[i])
}

_prefix_word(words, i) if {
	i > 0
	words[i - 1] in _wrapper_value_options
}

# `command -v foo` only looks foo up; it does not run it.
_command_lookup(words, i) if {
	basename(words[i]) == "command"
	words[i + 1] in {"-v", "-V"}
}

# _base_scripts are the shell scripts in the tool input: the command string
# and, for an argv array such as ["bash", "-lc", "<script>"], the script
# element itself (joining the array loses its quoting).
_base_scripts contains tools.command

_base_scripts contains script if {
	argv := tools.raw_command
	is_array(argv)
	is_string(argv[0])
	basename(argv[0]) in shells
	i := min({j | some j, a in argv; j > 0; _is_c_flag(a)})
	script := argv[i + 1]
	is_string(script)
}

# _shell_c_scripts adds one level of inner scripts run through `sh -c`,
# `bash -lc` and the like.
_shell_c_scripts := _base_scripts | {inner |
	some s in _base_scripts
	some seg in segments(s)
	inner := _inner_script(seg.words)
}

# scripts adds, to those, the commands run by command substitution, $(...)
# or `...`, even inside double quotes: echo "$(cat secret)". Substitutions
# inside single quotes are not run by the shell and are skipped. Nested
# substitutions are not looked into.
scripts := _shell_c_scripts | {inner |
	some s in _shell_c_scripts
	some inner in _substitutions(s)
}

_substitutions(script) := {inner |
	live := regex.replace(script, `'[^']*'`, "''")
	some m in regex.find_all_string_submatch_n("\\$\\(([^()]*)\\)|`([^`]*)`", live, -1)
	inner := concat("", array.slice(m, 1, 3))
}

_runs_script_arg(name) if name in shells

_runs_script_arg("su")

_is_c_flag(a) if regex.match(`^-[A-Za-z]*c[A-Za-z]*$`, a)

# The inner script is everything after the -c flag of a shell (or of su); for
# a string command it is normally a single quoted word.
_inner_script(words) := concat(" ", array.slice(cmd.args, i + 1, count(cmd.args))) if {
	cmd := simple_command(words)
	_runs_script_arg(cmd.name)
	i := min({j | some j, a in cmd.args; _is_c_flag(a)})
}

# commands holds every simple command found in the scripts.
commands contains cmd if {
	some s in scripts
	some seg in segments(s)
	cmd := simple_command(seg.words)
}

# pipes holds [left, right] pairs of simple commands where the output of left
# reaches right through a pipeline (directly or via commands in between).
pipes contains [left, right] if {
	some s in scripts
	segs := segments(s)
	some i, a in segs
	some j, b in segs
	i < j
	every k in numbers.range(i + 1, j) {
		segs[k].op in {"|", "|&"}
	}
	left := simple_command(a.words)
	right := simple_command(b.words)
}

# options lists the words of args that are options: they start with "-" and
# come before any "--".
options(args) := [a | some i, a in args; _is_option(args, i)]

# operands lists the words of args that are not options.
operands(args) := [a |
	some i, a in args
	not _is_option(args, i)
	not _ends_options(args, i)
]

_is_option(args, i) if {
	startswith(args[i], "-")
	not args[i] in {"-", "--"}
	not _after_end_of_options(args, i)
}

_ends_options(args, i) if {
	args[i] == "--"
	not _after_end_of_options(args, i)
}

_after_end_of_options(args, i) if {
	some j, a in args
	a == "--"
	j < i
}

# has_short_flag holds when a single-dash option cluster contains letter:
# has_short_flag(["-rf", "x"], "f").
has_short_flag(args, letter) if {
	some o in options(args)
	not startswith(o, "--")
	contains(o, letter)
}

# has_long_flag holds when a long option is name or an unambiguous GNU-style
# abbreviation of it at least min_len characters long (counting the dashes):
# has_long_flag(["--recur"], "--recursive", 5).
has_long_flag(args, name, min_len) if {
	some o in options(args)
	startswith(o, "--")
	n := split(o, "=")[0]
	count(n) >= min_len
	startswith(name, n)
}
