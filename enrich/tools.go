package enrich

import (
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
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
	if origin == "mcp" || strings.HasPrefix(name, "mcp__") {
		return FamilyMCP
	}
	if f, ok := toolFamilies[strings.ToLower(name)]; ok {
		return f
	}
	return FamilyOther
}

// mcpTool names the server and tool of an MCP call: from the AHP mcp
// descriptor, or from a Claude Code style name mcp__server__tool.
func mcpTool(name string, tool ast.Object) (server, toolName string) {
	if d := object(tool, "mcp"); d != nil {
		if s := object(d, "server"); s != nil {
			server, _ = text(s, "name")
			if server == "" {
				server, _ = text(s, "id")
			}
		}
		toolName, _ = text(d, "toolName")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok && (server == "" || toolName == "") {
		s, t, _ := strings.Cut(rest, "__")
		if server == "" {
			server = s
		}
		if toolName == "" {
			toolName = t
		}
	}
	if toolName == "" {
		toolName = name
	}
	return server, toolName
}

// pathKeys are the input fields that name a file, in the harnesses known.
var pathKeys = []string{"file_path", "path", "filePath", "absolute_path", "filename", "notebook_path", "target_file", "dir_path", "directory"}

// pathListKeys are the input fields that hold lists of files.
var pathListKeys = []string{"paths", "file_paths", "files"}

// toolPaths returns the paths a file or search tool names, with the input
// key each came from.
func toolPaths(input ast.Object) (keys, paths []string) {
	for _, k := range pathKeys {
		if s, ok := text(input, k); ok && s != "" {
			keys, paths = append(keys, k), append(paths, s)
		}
	}
	for _, k := range pathListKeys {
		for _, v := range elems(input, k) {
			if s, ok := asText(v.Value); ok && s != "" {
				keys, paths = append(keys, k), append(paths, s)
			}
		}
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

// patchPaths lists the files a Codex apply_patch envelope touches.
func patchPaths(patch string) []string {
	if !strings.Contains(patch, "*** ") {
		return nil
	}
	var out []string
	for line := range strings.Lines(patch) {
		line = strings.TrimRight(line, "\r\n")
		for _, prefix := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, prefix); ok && strings.TrimSpace(p) != "" {
				out = append(out, strings.TrimSpace(p))
			}
		}
	}
	return out
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
		"lwp-request", "lwp-download", "axel", "curlie",
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
	ClassPublisher: {
		"npm", "pnpm", "bun", "yarn", "npx", "bunx", "pipx", "uvx", "twine",
		"python", "python3", "python2", "pypy3", "poetry", "flit", "hatch", "uv", "pdm",
		"deno", "jsr", "vsce", "ovsx", "rye", "cargo", "gem", "mvn", "mvnw",
		"gradle", "gradlew", "dotnet", "nuget", "docker", "podman", "nerdctl", "buildah", "helm",
		"goreleaser", "gh", "pod",
	},
}

// ClassNames lists the classes in a fixed order.
var ClassNames = []string{
	ClassShell, ClassInterpreter, ClassDownloader, ClassNetwork,
	ClassEscalator, ClassDBClient, ClassInfra, ClassPublisher, ClassMkfs,
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
var mentionWords = []string{".ssh", "environ", "credentials", "flush", "--force-reset"}

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

// WriteOps returns the redirection operators that write a file, sorted.
func WriteOps() []string { return slices.Sorted(maps.Keys(writeOps)) }
