package enrich

import (
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/effects"
	"github.com/ahp-opa/ahp-opa/internal/secretscan"
	"github.com/ahp-opa/ahp-opa/transport"
	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

// Tool families: one rule written against a family covers every harness.
const (
	FamilyShell     = "shell"
	FamilyFileRead  = "file_read"
	FamilyFileWrite = "file_write"
	FamilyFileEdit  = "file_edit"
	FamilySearch    = "search"
	FamilyFetch     = "fetch"
	FamilyMCP       = "mcp"
	FamilyTask      = "task"
	FamilyOther     = "other"
)

// families maps the AHP tool.kind values, which win when present.
var kindFamilies = map[string]string{
	"shell": FamilyShell, "file_read": FamilyFileRead, "file_write": FamilyFileWrite,
	"file_edit": FamilyFileEdit, "search": FamilySearch, "fetch": FamilyFetch,
	"mcp": FamilyMCP, "task": FamilyTask,
}

// toolFamilies maps harness tool names, lower-cased, to families: Claude
// Code, Codex, Gemini CLI, and the agents whose tool names are known to
// share them (Copilot, Cursor, Cline, opencode).
var toolFamilies = map[string]string{
	// shell
	"bash":              FamilyShell, // Claude Code, opencode
	"run_shell_command": FamilyShell, // Gemini CLI
	"shell":             FamilyShell, // Codex
	"local_shell":       FamilyShell, // Codex
	"exec_command":      FamilyShell, // Codex
	"container.exec":    FamilyShell, // Codex
	"run_in_terminal":   FamilyShell, // Copilot
	"run_terminal_cmd":  FamilyShell, // Cursor
	"execute_command":   FamilyShell, // Cline
	"run_command":       FamilyShell,
	"powershell":        FamilyShell,
	// file_read
	"read":            FamilyFileRead, // Claude Code, opencode
	"read_file":       FamilyFileRead, // Gemini CLI, Codex, Cursor, Cline
	"read_many_files": FamilyFileRead, // Gemini CLI
	"view":            FamilyFileRead, // Codex, Copilot
	"notebookread":    FamilyFileRead, // Claude Code
	"view_image":      FamilyFileRead, // Codex
	// file_write
	"write":         FamilyFileWrite, // Claude Code, opencode
	"write_file":    FamilyFileWrite, // Gemini CLI
	"create_file":   FamilyFileWrite, // Copilot
	"write_to_file": FamilyFileWrite, // Cline
	// file_edit
	"edit":                        FamilyFileEdit, // Claude Code, opencode
	"multiedit":                   FamilyFileEdit, // Claude Code
	"notebookedit":                FamilyFileEdit, // Claude Code
	"replace":                     FamilyFileEdit, // Gemini CLI
	"apply_patch":                 FamilyFileEdit, // Codex
	"edit_file":                   FamilyFileEdit, // Cursor, Copilot
	"replace_in_file":             FamilyFileEdit, // Cline
	"insert_edit_into_file":       FamilyFileEdit, // Copilot
	"str_replace_editor":          FamilyFileEdit,
	"str_replace_based_edit_tool": FamilyFileEdit,
	"delete_file":                 FamilyFileEdit, // Cursor
	"delete":                      FamilyFileEdit, // Cursor hooks: Delete
	// search
	"glob":                FamilySearch, // Claude Code, Gemini CLI
	"grep":                FamilySearch, // Claude Code, opencode
	"ls":                  FamilySearch, // Claude Code
	"list_directory":      FamilySearch, // Gemini CLI
	"search_file_content": FamilySearch, // Gemini CLI
	"grep_search":         FamilySearch, // Cursor
	"file_search":         FamilySearch, // Cursor
	"codebase_search":     FamilySearch, // Cursor
	"list_dir":            FamilySearch, // Cursor
	"list_files":          FamilySearch, // Cline
	"search_files":        FamilySearch, // Cline
	"websearch":           FamilySearch, // Claude Code
	"google_web_search":   FamilySearch, // Gemini CLI
	"web_search":          FamilySearch, // Codex, Cursor
	// fetch
	"webfetch":       FamilyFetch, // Claude Code
	"web_fetch":      FamilyFetch, // Gemini CLI
	"fetch":          FamilyFetch, // opencode
	"fetch_webpage":  FamilyFetch, // Copilot
	"browser_action": FamilyFetch, // Cline
	// Windsurf (Cascade), Goose and Augment: from their tool references,
	// not yet checked against captured payloads (docs/policy.md, "Tool
	// shapes", says which rows are verified).
	"write_stdin":            FamilyShell,     // Codex: typed into an exec_command session
	"view_file":              FamilyFileRead,  // Windsurf: AbsolutePath
	"view_line_range":        FamilyFileRead,  // Windsurf
	"view_code_item":         FamilyFileRead,  // Windsurf: File
	"replace_file_content":   FamilyFileEdit,  // Windsurf: TargetFile, ReplacementChunks
	"find_by_name":           FamilySearch,    // Windsurf: SearchDirectory, Pattern
	"read_url_content":       FamilyFetch,     // Windsurf: Url
	"search_web":             FamilySearch,    // Windsurf: query
	"developer__shell":       FamilyShell,     // Goose: command
	"developer__text_editor": FamilyFileEdit,  // Goose: command is the editor verb
	"launch-process":         FamilyShell,     // Augment: command, cwd
	"write-process":          FamilyShell,     // Augment: input_text typed into a process
	"save-file":              FamilyFileWrite, // Augment: path, file_content
	"str-replace-editor":     FamilyFileEdit,  // Augment: command is the editor verb
	"remove-files":           FamilyFileEdit,  // Augment: file_paths
	"web-fetch":              FamilyFetch,     // Augment: url
	"web-search":             FamilySearch,    // Augment: query
	// task
	"task":        FamilyTask, // Claude Code
	"agent":       FamilyTask, // Claude Code
	"spawn_agent": FamilyTask,
}

// family classifies a tool: its kind when it names a family, then MCP
// origin or an mcp__server__tool name, then the name table.
func family(name, kind, origin string) string {
	if f, ok := kindFamilies[kind]; ok {
		return f
	}
	if origin == ahp.OriginMCP || isMCPName(name) {
		return FamilyMCP
	}
	if f, ok := toolFamilies[strings.ToLower(name)]; ok {
		return f
	}
	if _, t := qualifiedMCPName(name); t != "" {
		return FamilyMCP
	}
	return FamilyOther
}

// mcpTool names the server and tool of an MCP call: from the AHP mcp
// descriptor, or from the name as the harnesses spell it: mcp__server__tool
// (Claude Code, Codex), mcp_server_tool (Gemini CLI), MCP:tool (Cursor).
func mcpTool(name string, d transport.MCP) (server, toolName string) {
	server, toolName = d.Server, d.ToolName
	if server != "" && toolName != "" {
		return server, toolName
	}
	var s, t string
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		s, t, _ = strings.Cut(rest, "__")
	} else if s, t = qualifiedMCPName(name); t == "" {
		s, t = mcpNameParts(name)
	}
	if server == "" {
		server = s
	}
	if toolName == "" {
		toolName = t
	}
	if toolName == "" {
		toolName = name
	}
	return server, toolName
}

// pathKeys are the input fields that name a file, in the harnesses known.
var pathKeys = []string{"file_path", "path", "filePath", "absolute_path", "filename", "notebook_path", "target_file", "dir_path", "directory", "target", "source", "destination"}

// globTools take a path pattern (Glob's pattern: "~/.aws/**").
var globTools = map[string]bool{"glob": true}

// pathListKeys are the input fields that hold lists of files.
var pathListKeys = []string{"paths", "file_paths", "files"}

// toolPathLists are list fields of files that only one tool's input
// means as such: Gemini CLI's read_many_files reads the files and globs
// of include, while a search tool's include is a file-name filter.
var toolPathLists = map[string]string{"read_many_files": "include"}

// toolPaths returns the paths a file or search tool names, with the input
// key each came from; tool is the lower-cased tool name.
func toolPaths(tool string, input ast.Object) (keys, paths []string) {
	if globTools[tool] {
		if s, ok := text(input, "pattern"); ok && isPathPattern(s) {
			keys, paths = append(keys, "pattern"), append(paths, s)
		}
	}
	// Any path-like field, however the harness spells it (roles.go).
	rk, rp := roleKeyPaths(input)
	keys, paths = append(keys, rk...), append(paths, rp...)
	listKeys := pathListKeys
	if k, ok := toolPathLists[tool]; ok {
		listKeys = append(slices.Clip(listKeys), k)
	}
	for _, k := range listKeys {
		for _, s := range texts(field(input, k)) {
			if s != "" {
				keys, paths = append(keys, k), append(paths, s)
			}
		}
	}
	// Any other list of files, however the tool spells the field.
	if input != nil {
		input.Foreach(func(k, v *ast.Term) {
			ks, ok := k.Value.(ast.String)
			if !ok || slices.Contains(listKeys, string(ks)) || !isRole(pathListRoleKeys, string(ks)) {
				return
			}
			for _, s := range texts(v.Value) {
				if s == "" {
					continue
				}
				if rest, isFile := cutFileURL(s); isFile {
					s = rest
				} else if strings.Contains(s, "://") {
					continue
				}
				keys, paths = append(keys, string(ks)), append(paths, s)
			}
		})
	}
	for _, e := range elems(input, "edits") {
		if m, ok := e.Value.(ast.Object); ok {
			if s, ok := text(m, "file_path"); ok && s != "" {
				keys, paths = append(keys, "edits"), append(paths, s)
			}
		}
	}
	// Codex's apply_patch hook payload carries the envelope as command.
	for _, k := range []string{"patch", "input", "command"} {
		if s, ok := text(input, k); ok {
			for _, p := range patchPaths(s) {
				keys, paths = append(keys, k), append(paths, p)
			}
		}
	}
	return keys, paths
}

// isPathPattern reports whether a glob names a place of its own (~/…, /…)
// rather than files under the tool's path.
func isPathPattern(s string) bool {
	return strings.HasPrefix(s, "~") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "$HOME")
}

// Program classes: input.ahp.shell.classes maps each class to the indices
// of the commands whose program (or, for escalators, a wrapper) is in it,
// so that a rule about interpreters starts with
// `input.ahp.shell.classes.interpreter` and OPA's rule index skips it when
// none runs. The lists match the sets of the same meaning in
// rego/lib/shell.rego (engine/library_test.go checks them).
const (
	ClassShell       = "shell"
	ClassInterpreter = "interpreter"
	ClassDownloader  = "downloader"
	ClassNetwork     = "network"
	ClassEscalator   = "escalator"
	ClassDBClient    = "db_client"
	ClassInfra       = "infra"
	ClassPublisher   = "publisher"
	ClassMkfs        = "mkfs" // also every mkfs.* and newfs_*
	ClassRelease     = "release"
	ClassGrant       = "grant"
)

var classMembers = map[string][]string{
	ClassShell: {
		"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish",
		"csh", "tcsh", "rbash", "ksh93", "pdksh", "oksh", "loksh",
	},
	ClassInterpreter: {
		"python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node",
		"nodejs", "php", "lua", "luajit", "deno", "bun", "pwsh", "powershell",
		"osascript", "tclsh", "wish", "rscript", "jshell", "irb", "ipython",
	},
	ClassDownloader: {
		"curl", "wget", "wget2", "aria2c", "http", "https", "xh", "fetch",
		"lwp-request", "lwp-download", "axel", "curlie", "lynx", "w3m", "links",
		"links2", "elinks",
	},
	ClassNetwork: {
		"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "socat",
		"telnet", "cryptcat", "pwncat",
	},
	ClassEscalator: {"sudo", "doas", "pkexec", "runuser", "su", "sudoedit", "run0"},
	ClassDBClient: {
		"psql", "mysql", "mariadb", "sqlite3", "sqlite", "duckdb", "sqlcmd",
		"clickhouse", "clickhouse-client", "cqlsh", "mongosh", "mongo",
		"redis-cli", "valkey-cli", "keydb-cli", "cockroach", "snowsql", "bq",
		"usql", "pgcli", "mycli", "litecli", "trino", "presto", "beeline",
		"spanner-cli", "influx",
	},
	ClassInfra: {
		"terraform", "tofu", "terragrunt", "terraform.exe", "pulumi", "cdk", "cdktf", "sst",
		"serverless", "sls", "kubectl", "oc", "k", "kubecolor", "helm", "docker", "podman",
		"nerdctl", "docker-compose", "podman-compose", "aws", "gcloud", "gsutil", "az",
		"eksctl", "heroku", "fly", "flyctl", "doctl",
	},
	ClassMkfs: {"mkfs", "mke2fs", "mkswap", "newfs", "mkdosfs", "mkntfs"},
	// Release, deploy, image and installer acts (release.rego, publish.rego).
	ClassRelease: {
		"vercel", "vc", "netlify", "mike", "npx", "pnpx", "bunx", "aws", "gsutil", "gcloud", "azcopy",
		"conda", "mamba", "micromamba", "pipx", "pnpm", "volta", "rustup-init", "rustup-init.sh", "opam",
		"docker", "podman", "nerdctl", "buildah", "crane", "skopeo", "ko", "regctl", "oras",
	},
	// Capabilities, groups and host namespaces (escalation.rego).
	ClassGrant: {"setcap", "usermod", "gpasswd", "adduser", "addgroup", "dseditgroup", "useradd", "nsenter"},
	ClassPublisher: {
		"npm", "pnpm", "bun", "yarn", "npx", "bunx", "pipx", "uvx", "twine",
		"python", "python3", "python2", "pypy3", "poetry", "flit", "hatch", "uv", "pdm",
		"deno", "jsr", "vsce", "ovsx", "rye", "cargo", "gem", "mvn", "mvnw",
		"gradle", "gradlew", "dotnet", "nuget", "helm",
		"goreleaser", "pod", "changeset", "release-it", "semantic-release", "lerna", "np", "cloudsmith",
	},
}

// ClassNames lists the classes in a fixed order.
var ClassNames = []string{
	ClassShell, ClassInterpreter, ClassDownloader, ClassNetwork,
	ClassEscalator, ClassDBClient, ClassInfra, ClassPublisher, ClassMkfs,
	ClassRelease, ClassGrant,
}

// ClassMembers returns the programs of a class.
func ClassMembers(class string) []string { return classMembers[class] }

// programClasses maps a program name to a bit set of ClassNames.
var programClasses = func() map[string]uint16 {
	m := map[string]uint16{}
	for i, c := range ClassNames {
		for _, p := range classMembers[c] {
			m[p] |= 1 << i
		}
	}
	return m
}()

// Mentions: input.ahp.shell.mentions maps each of these strings to the
// indices of the commands with an argument that contains it, for the rules
// that look for secret files named inside other text (`cat ~/.ssh/id_rsa`,
// `python -c 'open("/proc/self/environ")'`).
var mentionWords = []string{".ssh", "environ", "credentials", "flush", "--force-reset", "ahp-opa"}

var classMkfsBit = uint16(1) << slices.Index(ClassNames, ClassMkfs)

// writeOps are the redirections that write a file (ahp.lib.shell.write_ops).
var writeOps = map[string]bool{">": true, ">>": true, ">|": true, "&>": true, "&>>": true, "<>": true}

// writingPrograms are the programs ahp.lib.shell.writes finds writing their
// file arguments. With writeOps they decide input.ahp.writes, which must
// stay true whenever ahp.lib.shell.writes may hold something.
var writingPrograms = map[string]bool{
	"tee": true, "truncate": true, "sponge": true, "apply_patch": true, "applypatch": true,
	"cp": true, "mv": true, "install": true, "ln": true, "rsync": true, "ditto": true,
	"sed": true, "perl": true, "gsed": true, "curl": true, "wget": true, "dd": true,
}

// Tool shapes: the one place that says how a tool's input carries what a
// rule is about, whatever the harness or server calls the tool. Rules are
// written once against the family and the facts of input.ahp; a new tool
// shape is one row here (docs/policy.md, "Tool shapes").

// actsAs maps tool names (lower-cased; for an MCP tool, the tool part of
// its name) to the family they act as: MCP servers and unknown harnesses
// that run commands or touch files get the same rules as Bash or Read. An
// MCP tool keeps input.ahp.tool.mcp, so the MCP allowlist still applies.
var actsAs = map[string]string{
	// Commands: MCP shell servers (run_command, execute_command, exec…),
	// remote-exec servers (ssh_exec), and harness tools of the same names.
	"run_command":          FamilyShell,
	"execute_command":      FamilyShell,
	"exec":                 FamilyShell,
	"exec_command":         FamilyShell,
	"execute":              FamilyShell,
	"run":                  FamilyShell,
	"shell":                FamilyShell,
	"bash":                 FamilyShell,
	"shell_exec":           FamilyShell,
	"run_shell_command":    FamilyShell,
	"run_terminal_command": FamilyShell,
	"run_in_terminal":      FamilyShell,
	"terminal":             FamilyShell,
	"start_process":        FamilyShell, // Desktop Commander
	"ssh_exec":             FamilyShell,
	"ssh_execute":          FamilyShell,
	"remote_exec":          FamilyShell,
	"exec_ssh":             FamilyShell,
	// Input typed into a process an earlier call started (roles.go).
	"write_stdin":           FamilyShell,
	"write-process":         FamilyShell,
	"interact_with_process": FamilyShell,
	"send_command_input":    FamilyShell,
	"write_bash":            FamilyShell,
	"send_keys":             FamilyShell,
	"tmux_send_keys":        FamilyShell,
	"send_input":            FamilyShell,
	"write_input":           FamilyShell,
	"terminal_write":        FamilyShell,
	"write_to_terminal":     FamilyShell,
	"send_to_terminal":      FamilyShell,
	"terminal_send_text":    FamilyShell,
	// Files: the reference filesystem MCP server and Desktop Commander.
	"read_file":           FamilyFileRead,
	"read_text_file":      FamilyFileRead,
	"read_media_file":     FamilyFileRead,
	"read_multiple_files": FamilyFileRead,
	"search_files":        FamilySearch,
	"search_code":         FamilySearch,
	"list_directory":      FamilySearch,
	"directory_tree":      FamilySearch,
	"write_file":          FamilyFileWrite,
	"create_file":         FamilyFileWrite,
	"edit_file":           FamilyFileEdit,
	"edit_block":          FamilyFileEdit,
	"move_file":           FamilyFileEdit,
}

// actsAsFolded is actsAs by folded name (foldName): MCP servers spell
// run_command as runCommand or run-command as well.
var actsAsFolded = func() map[string]string {
	m := make(map[string]string, len(actsAs))
	for k, f := range actsAs {
		m[foldName(k)] = f
	}
	return m
}()

// foldName is a lower-case tool name without its _ and - separators.
func foldName(n string) string {
	if !strings.ContainsAny(n, "_-") {
		return n
	}
	return strings.NewReplacer("_", "", "-", "").Replace(n)
}

// programTools are tools named for the one program they run: an MCP
// kubectl tool takes kubectl's arguments, as an array or a string.
var programTools = map[string]bool{
	"kubectl": true, "helm": true, "docker": true, "git": true, "gh": true,
	"aws": true, "gcloud": true, "az": true, "terraform": true,
}

// programOfTool names the program a tool runs when the tool is named for
// it: kubectl, or for an MCP tool also a word of its name (gcloud in
// run_gcloud_command, aws in call_aws); "" for none.
func programOfTool(tool string, mcp bool) string {
	if programTools[tool] {
		return tool
	}
	if !mcp {
		return ""
	}
	for w := range strings.FieldsFuncSeq(tool, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if programTools[w] {
			return w
		}
	}
	return ""
}

// runsKnownProgram reports whether an MCP tool's command-like field
// (command, cmd, cli_command, commandLine…) holds a command line of a
// program the library knows (a CLI of the effects table, a shell, an
// interpreter, a client): such a server runs it, whatever the tool's name.
func runsKnownProgram(input ast.Object) bool {
	line, ok := hasRole(input, commandRoleKeys)
	return ok && startsWithKnownProgram(line)
}

// startsWithKnownProgram reports whether a command line's first word is
// a program the library knows.
func startsWithKnownProgram(line string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	first = path.Base(first)
	if first == "" || first == "." || first == "/" {
		return false
	}
	if _, ok := programClasses[first]; ok || programTools[first] {
		return true
	}
	m, err := effects.Builtin()
	return err == nil && m.Known(first)
}

// serverClients are the clients whose language an MCP server named for a
// data store speaks, with the option that takes one statement: the
// redis server's execute {"command": "FLUSHALL"} is redis-cli FLUSHALL,
// the postgres server's run {"command": "DROP TABLE t"} is psql -c.
var serverClients = map[string][]string{
	"redis": {"redis-cli"}, "valkey": {"valkey-cli"}, "keydb": {"keydb-cli"},
	"postgres": {"psql", "-c"}, "postgresql": {"psql", "-c"}, "pg": {"psql", "-c"}, "supabase": {"psql", "-c"},
	"mysql": {"mysql", "-e"}, "mariadb": {"mariadb", "-e"}, "sqlite": {"sqlite3", "-cmd"},
	"duckdb": {"duckdb", "-c"}, "mongo": {"mongosh", "--eval"}, "mongodb": {"mongosh", "--eval"},
	"clickhouse": {"clickhouse-client", "-q"}, "cassandra": {"cqlsh", "-e"}, "mssql": {"sqlcmd", "-Q"},
	"sqlserver": {"sqlcmd", "-Q"}, "snowflake": {"snowsql", "-q"}, "cockroach": {"cockroach", "sql", "-e"},
}

// serverClient is the client of the data store an MCP server is named
// for (a word of its name: redis, mcp-server-postgres, mysql_db), nil
// for any other server.
func serverClient(server string) []string {
	for w := range strings.FieldsFuncSeq(strings.ToLower(server), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' }) {
		if c, ok := serverClients[w]; ok {
			return c
		}
	}
	return nil
}

// commandFields are the input fields that may hold the command of a shell
// tool whose shape is not known (an MCP shell server, an AHP harness), in
// the order read: {"command": …}, {"cmd": …}, Codex local_shell's
// {"action": {"command": […]}}.
var commandFields = append([]adapters.Field{{"command"}, {"cmd"}, {"action", "command"}}, roleCommandFields...)

// workdirFields are the input fields that may name the directory such a
// tool runs in (Codex's workdir, Gemini CLI's dir_path, Cursor's cwd…).
var workdirFields = []adapters.Field{
	{"workdir"}, {"cwd"}, {"working_directory"}, {"working_dir"}, {"directory"}, {"dir_path"},
	{"action", "workdir"}, {"action", "working_directory"}, {"Cwd"},
}

// genericShell is the shape read for a shell tool that is not one of a
// native agent's own.
var genericShell = adapters.Shell{Command: commandFields, Dir: workdirFields}

// actingFamily returns the family a tool acts as when its name or its
// input says more than the harness did: a known MCP or harness tool name
// (actsAs, programTools), or for an unknown tool, a path field with
// (write) or without (read) text to write. "" keeps the family.
func (c *call) actingFamily() string {
	fam, name, input := c.family, c.name, c.input
	n := strings.ToLower(name)
	if fam == FamilyMCP {
		n = strings.ToLower(c.tool)
	}
	if f := editorFamily(n, input); f != "" {
		return f
	}
	if (fam == FamilyFetch || fam == FamilyMCP || fam == FamilyOther) && hasFileURL(input) {
		return FamilyFileRead // a fetch or browser opening file:///… reads the file
	}
	if (fam == FamilyMCP || fam == FamilyOther) && c.codeRun() != nil {
		return FamilyShell // python3 -c CODE (coderun.go)
	}
	if (fam == FamilyMCP || fam == FamilyOther) && nameHas(name, sendingWords) {
		_, hasPath := hasRole(input, pathRoleKeys)
		if !hasPath {
			_, hasPath = hasRole(input, pathListRoleKeys) // browser_file_upload {"paths": […]}
		}
		if _, hasContent := hasRole(input, contentRoleKeys); hasPath && !hasContent {
			// upload_file, attach_file, send_file: the file is read, and
			// goes wherever the tool sends it. Given text, the tool
			// writes it instead (put {target, content}).
			return FamilyFileRead
		}
	}
	if fam != FamilyMCP && fam != FamilyOther {
		return ""
	}
	if fam == FamilyMCP {
		if c.equivalent = equivalentCommand(n, input); c.equivalent != "" {
			return FamilyShell // a remote act, judged as its CLI (remote.go)
		}
	}
	if f, ok := actsAsFolded[foldName(n)]; ok {
		if f == FamilyShell {
			if cmd, _, _ := c.source(); cmd == nil {
				return ""
			}
		}
		return f
	}
	if programTools[n] || fam == FamilyMCP && programOfTool(n, true) != "" || fam == FamilyMCP && runsKnownProgram(input) {
		if cmd, _, _ := c.source(); cmd != nil {
			return FamilyShell
		}
		return ""
	}
	if fam == FamilyOther {
		// A tool nobody listed: judged by the roles of its fields, and
		// a path tool named for changing files changes them (delete_path,
		// removeFile, save_note).
		f := inferFamily(input)
		if f == FamilyShell {
			if cmd, _, _ := c.source(); cmd == nil {
				return ""
			}
		}
		if f == FamilyFileRead && changesByName(name) {
			f = FamilyFileEdit
		}
		return f
	}
	return ""
}

// changingWords are words of a tool's name that say it changes the file
// it names.
var changingWords = map[string]bool{
	"write": true, "save": true, "create": true, "edit": true, "delete": true, "remove": true,
	"rm": true, "unlink": true, "move": true, "rename": true, "append": true, "patch": true,
	"replace": true, "overwrite": true, "modify": true, "update": true,
}

// sendingWords are words of a tool's name that say it sends the file it
// names somewhere.
var sendingWords = map[string]bool{
	"upload": true, "attach": true, "send": true, "share": true, "put": true, "post": true,
}

// changesByName reports whether a word of a tool's name (split at _, -,
// . and case changes) says it changes files.
func changesByName(name string) bool { return nameHas(name, changingWords) }

// nameHas reports whether a word of a tool's name (split at _, -, ., a
// space and case changes) is in words.
func nameHas(name string, words map[string]bool) bool {
	start := 0
	for i := 0; i <= len(name); i++ {
		end := i == len(name)
		if !end {
			c := name[i]
			sep := c == '_' || c == '-' || c == '.' || c == ' '
			camel := c >= 'A' && c <= 'Z' && i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z'
			if !sep && !camel {
				continue
			}
			if camel {
				if words[strings.ToLower(name[start:i])] {
					return true
				}
				start = i
				continue
			}
		}
		if words[strings.ToLower(name[start:i])] {
			return true
		}
		start = i + 1
	}
	return false
}

// shellSource finds the command a shell-like tool runs and the directory
// it runs in. The command is a string (parsed as shell) or an argv array.
//
// A native agent's own shell tool (adapters.ShellOf) is read at exactly
// the fields the agent executes: Gemini CLI's run_shell_command runs
// command in dir_path, whatever else its input holds. Any other tool is
// read at every field that may hold a command or a directory:
//
//	{"command": "ls -la"} or {"cmd": …}            Bash, Codex exec_command, MCP shells
//	{"command": ["bash", "-lc", "…"]}              Codex shell
//	{"action": {"command": [...], "workdir": …}}   Codex local_shell
//	{"command": "rm", "args": ["-rf", "x"]}        MCP exec servers
//	{"args": ["get", "pods"]} for a tool kubectl   program tools
//
// When two of the fields read hold different values, which one runs cannot
// be known: ambiguous names them, and the first is analysed.
//
// agent is the native agent of the event ("" for none), tool the
// lower-cased tool name (the tool part for MCP), mcp whether it is an MCP
// tool.
func shellSource(agent, tool string, mcp bool, input ast.Object) (cmd ast.Value, workdir string, ambiguous []string) {
	shape, own := adapters.Shell{}, false
	if agent != "" && !mcp {
		shape, own = adapters.ShellOf(agent, tool)
	}
	if !own {
		shape = genericShell
		if s, ok := stdinTools[foldName(tool)]; ok {
			shape, own = s, true
		}
	}
	var cmdFrom adapters.Field
	for _, f := range shape.Command {
		c := at(input, f)
		if c == nil {
			continue
		}
		if cmd == nil {
			cmd, cmdFrom = c, f
		} else if c.Compare(cmd) != 0 {
			ambiguous = appendField(ambiguous, cmdFrom, f)
		}
	}
	var dirFrom adapters.Field
	for _, f := range shape.Dir {
		s, ok := at(input, f).(ast.String)
		if !ok || s == "" {
			continue
		}
		if workdir == "" {
			workdir, dirFrom = string(s), f
		} else if string(s) != workdir {
			ambiguous = appendField(ambiguous, dirFrom, f)
		}
	}
	if own {
		return cmd, workdir, ambiguous
	}
	argsValue := field(input, "args")
	args, hasArgs := argsValue.(*ast.Array)
	argLine, _ := argsValue.(ast.String)
	prog := programOfTool(tool, mcp)
	prepend := func(first *ast.Term, rest *ast.Array) ast.Value {
		terms := make([]*ast.Term, 0, rest.Len()+1)
		terms = append(terms, first)
		for i := range rest.Len() {
			terms = append(terms, rest.Elem(i))
		}
		return ast.NewArray(terms...)
	}
	switch c := cmd.(type) {
	case ast.String:
		if hasArgs && !strings.ContainsAny(string(c), " \t\n;|&") {
			cmd = prepend(ast.NewTerm(c), args)
		} else if hasArgs || argLine != "" {
			// A server that runs command through a shell appends the args
			// as they are (Node's spawn with shell: true joins them with
			// spaces), so they are part of the line that runs.
			cmd = ast.String(string(c) + " " + argsLine(args, argLine))
		} else if prog != "" && string(c) != prog && !strings.HasPrefix(string(c), prog+" ") {
			cmd = ast.String(prog + " " + string(c))
		}
	case *ast.Array:
		var first string
		if c.Len() > 0 {
			first, _ = asText(c.Elem(0).Value)
		}
		if prog != "" && first != prog {
			cmd = prepend(ast.StringTerm(prog), c)
		}
	case nil:
		if hasArgs && prog != "" {
			cmd = prepend(ast.StringTerm(prog), args)
		}
	}
	return cmd, workdir, ambiguous
}

// argsLine is an MCP exec tool's args as the shell line they extend: a
// string as it is, an array's elements joined with spaces (anything but
// text as its JSON).
func argsLine(args *ast.Array, line ast.String) string {
	if args == nil {
		return string(line)
	}
	parts := make([]string, 0, args.Len())
	for i := range args.Len() {
		e := args.Elem(i)
		if s, ok := e.Value.(ast.String); ok {
			parts = append(parts, string(s))
		} else {
			parts = append(parts, e.Value.String())
		}
	}
	return strings.Join(parts, " ")
}

// at returns the value at a field of input, nil when absent.
func at(input ast.Object, f adapters.Field) ast.Value {
	obj := input
	for i, k := range f {
		v := field(obj, k)
		if i == len(f)-1 {
			return v
		}
		if obj, _ = v.(ast.Object); obj == nil {
			return nil
		}
	}
	return nil
}

// appendField adds the names of two disagreeing fields to list, once each.
func appendField(list []string, fs ...adapters.Field) []string {
	for _, f := range fs {
		if name := f.String(); !slices.Contains(list, name) {
			list = append(list, name)
		}
	}
	return list
}

var keyCredential = ast.StringTerm("credential")

// urlCredential names the kind of credential a URL carries, or "": a live
// token in it (secretscan kinds), or a password written in its user info
// (https://user:pw@host; a $VARIABLE there is not written out).
func urlCredential(u *url.URL, raw string) string {
	for _, f := range secretscan.Scan(raw, 4) {
		if !f.Placeholder {
			return f.Kind
		}
	}
	if pw, ok := u.User.Password(); ok && pw != "" && !strings.ContainsAny(pw, "$`") {
		return "url-password"
	}
	return ""
}

// WriteOps returns the redirection operators that write a file, sorted.
func WriteOps() []string { return slices.Sorted(maps.Keys(writeOps)) }
