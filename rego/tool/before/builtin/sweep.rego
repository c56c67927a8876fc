package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.shell
import input.ahp.shell.programs

# Sweeps, the second half of dev.ahp-opa.secrets.credential-dir
# (leaks.rego): a recursive read, search or copy of a directory ABOVE
# credential locations — a home, ~/.config, ~/Library, /etc, / — through
# any tool: the agents' own search tools (Grep, Glob, grep_search,
# search_file_content, Copilot's grep and glob, MCP search_files, a search
# with no path run from the home) and shell commands (grep -r, rg, tar c,
# zip -r, cp -r, rsync, find -exec cat, cat ~/.*). ahp-opa marks such a
# directory holds_credentials from its credential catalogue. A search
# whose filter reaches no secret file (Grep over ~ with glob *.go) is
# judged by that filter; listing names (ls, find, du, tree, rg --files,
# grep -l, LS, list_directory) is allowed.

# A file search or a tool that reads many files, over a directory that
# holds credentials.
_credential_dir_reads contains concat(" ", [input.ahp.tool.name, "sweeps", p.raw]) if {
	input.ahp.tool.family in {"search", "file_read"}
	_sweep_reads_many
	some p in _sweep_targets
	p.holds_credentials
	not _sweep_filtered(p)
	not config.path_excepted(p)
}

# What a search names and what ahp-opa found it reaches (tool.scope: its
# filter joined to its root, the session's directory when it names none).
_sweep_targets contains p if some p in input.ahp.tool.paths

_sweep_targets contains p if some p in input.ahp.tool.scope

_sweep_reads_many if input.ahp.tool.family == "search"

_sweep_reads_many if lower(input.ahp.tool.name) in {"read_many_files", "read_multiple_files", "directory_tree"}

_sweep_reads_many if {
	some p in input.ahp.tool.paths
	p.glob
}

# The root of a search with a filter is judged by the filter joined to it
# (scope, key "filter").
_sweep_filtered(p) if {
	p.key != "filter"
	some q in input.ahp.tool.scope
	q.key == "filter"
}

_sweep_filtered(_) if _lists_names

# A shell command that reads recursively under such a directory, or reads
# a glob that spans one (cat ~/.*).
_credential_dir_reads contains concat(" ", [input.ahp.shell.commands[r.command].name, "sweeps", r.path.raw]) if {
	input.ahp.tool.family == "shell"
	some r in shell.reads
	r.path.holds_credentials
	_sweep_read(input.ahp.shell.commands[r.command], r.path)
	not config.path_excepted(r.path)
}

_sweep_read(cmd, p) if {
	p.glob
	not cmd.name in _sweep_listers
}

_sweep_read(cmd, _) if _sweep_recursive(cmd.name, cmd.args)

# find over such a directory that runs a reader on what it finds, or feeds
# it to xargs.
_credential_dir_reads contains concat(" ", ["find", "sweeps", p.raw]) if {
	input.ahp.tool.family == "shell"
	programs.find
	some i in programs.find
	cmd := input.ahp.shell.commands[i]
	some p in cmd.paths
	p.holds_credentials
	_sweep_find_reads(i, cmd)
	not config.path_excepted(p)
}

_sweep_find_reads(_, cmd) if {
	some k, a in cmd.args
	a in {"-exec", "-execdir", "-ok", "-okdir"}
	cmd.args[k + 1] in _sweep_readers
}

_sweep_find_reads(i, _) if {
	some cmd in input.ahp.shell.commands
	i in cmd.inputs
	cmd.name == "xargs"
	some a in args.operands(cmd.args)
	a in _sweep_readers
}

_sweep_readers := {
	"cat", "grep", "egrep", "fgrep", "rg", "head", "tail", "less", "more", "strings",
	"base64", "xxd", "od", "hexdump", "cp", "tar", "zip", "curl", "wget", "nc", "scp",
	"rsync", "sh", "bash", "awk", "sed", "bat", "jq",
}

# Programs that print names, not contents.
_sweep_listers := {"ls", "find", "du", "tree", "stat", "file", "wc", "exa", "eza", "fd", "fdfind", "realpath", "readlink", "basename", "dirname", "echo", "printf", "test", "["}

_sweep_greps := {"grep", "egrep", "fgrep", "zgrep", "ugrep", "ggrep"}

_sweep_recursive(name, a) if {
	name in _sweep_greps
	_grep_sweep_recursive(a)
	not _sweep_names_only(a)
}

_sweep_recursive(name, a) if {
	name in {"rg", "ag", "ack", "ack-grep", "pt", "sift", "ripgrep"}
	not _sweep_names_only(a)
	not "--files" in a
	not "--type-list" in a
}

_sweep_recursive("tar", a) if _sweep_tar_create(a[0])

_sweep_recursive("tar", a) if {
	some o in args.options(a)
	_sweep_tar_create(o)
}

_sweep_recursive("zip", a) if {
	some o in args.options(a)
	regex.match(`^-[a-zA-Z]*[rR]`, o)
}

_sweep_recursive(name, a) if {
	name in {"7z", "7za", "7zz"}
	"a" in args.operands(a)
}

_sweep_recursive(name, a) if {
	name in {"cp", "scp", "gcp"}
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*[rRa][a-zA-Z]*|--recursive|--archive)$`, o)
}

_sweep_recursive(name, _) if name in {"rsync", "rclone", "ditto", "restic", "borg", "duplicity", "rdiff-backup"}

_sweep_recursive("gsutil", a) if "-r" in a

_sweep_recursive("aws", a) if {
	"s3" in a
	some x in a
	x in {"sync", "--recursive"}
}

_grep_sweep_recursive(a) if {
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive|--dereference-recursive|--directories=recurse|-d ?recurse)$`, o)
}

_grep_sweep_recursive(a) if {
	some k, x in a
	x in {"-d", "--directories"}
	a[k + 1] == "recurse"
}

_sweep_names_only(a) if {
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*[lLc][a-zA-Z]*|--files-with(out)?-match(es)?|--count|--files)$`, o)
}

_sweep_tar_create(x) if regex.match(`^-?[a-zA-Z]*c[a-zA-Z]*$`, x)

_sweep_tar_create("--create")
