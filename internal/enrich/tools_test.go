package enrich

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestToolShapes pins the tool-shape table: each shape reaches the family,
// command, working directory or paths the rules read.
func TestToolShapes(t *testing.T) {
	tests := []struct {
		name    string
		tool    map[string]any
		family  string
		command string // input.ahp.shell.command, when a shell
		cwd     string // input.ahp.workspace.cwd
		paths   []string
	}{
		{"mcp run_command", map[string]any{"name": "mcp__shell__run_command", "input": map[string]any{"command": "rm -rf ~"}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"mcp exec with cmd", map[string]any{"name": "mcp__terminal__exec", "input": map[string]any{"cmd": "ls"}}, "shell", "ls", "/home/dev/repo", nil},
		{"mcp exec with args", map[string]any{"name": "mcp__proc__exec", "input": map[string]any{"command": "rm", "args": []any{"-rf", "/"}}}, "shell", "rm -rf /", "/home/dev/repo", nil},
		// A server that spawns with a shell joins command and args as
		// they are: the args are part of what runs, spaces or not.
		{"mcp exec, command with spaces and args", map[string]any{"name": "mcp__proc__run_command", "input": map[string]any{"command": "rm -rf", "args": []any{"~"}}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"mcp exec, args as one string", map[string]any{"name": "mcp__proc__exec", "input": map[string]any{"command": "rm", "args": "-rf ~"}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"mcp program tool, args", map[string]any{"name": "mcp__k8s__kubectl", "input": map[string]any{"args": []any{"get", "pods"}}}, "shell", "kubectl get pods", "/home/dev/repo", nil},
		{"mcp program tool, string", map[string]any{"name": "mcp__k8s__kubectl", "input": map[string]any{"command": "delete ns x"}}, "shell", "kubectl delete ns x", "/home/dev/repo", nil},
		{"mcp program tool, full line", map[string]any{"name": "mcp__k8s__kubectl", "input": map[string]any{"command": "kubectl get ns"}}, "shell", "kubectl get ns", "/home/dev/repo", nil},
		// MCP servers spell tool names in camel or kebab case too.
		{"mcp camel case run command", map[string]any{"name": "mcp__x__runCommand", "input": map[string]any{"command": "rm -rf ~"}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"mcp kebab case execute command", map[string]any{"name": "mcp__x__execute-command", "input": map[string]any{"command": "rm -rf ~"}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"mcp camel case read file", map[string]any{"name": "mcp__fs__readTextFile", "input": map[string]any{"path": "~/.aws/credentials"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.aws/credentials"}},
		{"mcp ssh exec", map[string]any{"name": "mcp__ssh__ssh_exec", "input": map[string]any{"host": "h", "command": "uptime"}}, "shell", "uptime", "/home/dev/repo", nil},
		{"mcp shell name without command", map[string]any{"name": "mcp__x__run", "input": map[string]any{"query": "q"}}, "mcp", "", "/home/dev/repo", nil},
		{"mcp unknown tool", map[string]any{"name": "mcp__github__create_issue", "input": map[string]any{"title": "rm -rf /"}}, "mcp", "", "/home/dev/repo", nil},
		{"codex local_shell", map[string]any{"name": "local_shell", "input": map[string]any{"action": map[string]any{"command": []any{"ls", "-la"}, "workdir": "/tmp"}}}, "shell", "ls -la", "/tmp", nil},
		{"codex shell workdir", map[string]any{"name": "shell", "input": map[string]any{"command": []any{"rm", "-rf", "x"}, "workdir": "/home/dev"}}, "shell", "rm -rf x", "/home/dev", nil},
		{"relative workdir", map[string]any{"name": "shell", "input": map[string]any{"command": []any{"ls"}, "workdir": "sub"}}, "shell", "ls", "/home/dev/repo/sub", nil},
		{"mcp filesystem read", map[string]any{"name": "mcp__filesystem__read_text_file", "input": map[string]any{"path": "~/.aws/credentials"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.aws/credentials"}},
		{"mcp filesystem write", map[string]any{"name": "mcp__filesystem__write_file", "input": map[string]any{"path": "a.txt", "content": "x"}}, "file_write", "", "/home/dev/repo", []string{"/home/dev/repo/a.txt"}},
		{"mcp move_file", map[string]any{"name": "mcp__filesystem__move_file", "input": map[string]any{"source": "a", "destination": "/etc/b"}}, "file_edit", "", "/home/dev/repo", []string{"/home/dev/repo/a", "/etc/b"}},
		// A shell rc file's text runs later: it is analysed as commands.
		{"copilot filePath", map[string]any{"name": "create_file", "input": map[string]any{"filePath": "/home/dev/.zshrc", "content": "x"}}, "file_write", "x\n", "/home/dev/repo", []string{"/home/dev/.zshrc"}},
		{"unknown tool with target and content", map[string]any{"name": "put", "input": map[string]any{"target": "/etc/hosts", "content": "x"}}, "file_write", "", "/home/dev/repo", []string{"/etc/hosts"}},
		{"unknown tool with filename", map[string]any{"name": "open_file", "input": map[string]any{"filename": "~/.netrc"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.netrc"}},
		{"unknown tool without paths", map[string]any{"name": "think", "input": map[string]any{"thought": "x"}}, "other", "", "/home/dev/repo", nil},
		{"glob pattern with a place", map[string]any{"name": "Glob", "input": map[string]any{"pattern": "~/.aws/**"}}, "search", "", "/home/dev/repo", []string{"/home/dev/.aws/**"}},
		// Gemini CLI's read_many_files reads the files and globs of include.
		{"gemini read_many_files include", map[string]any{"name": "read_many_files", "input": map[string]any{"include": []any{"~/.aws/credentials", "src/*.go"}}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.aws/credentials", "/home/dev/repo/src/*.go"}},
		{"glob pattern relative", map[string]any{"name": "Glob", "input": map[string]any{"pattern": "**/*.go"}}, "search", "", "/home/dev/repo", nil},
		{"grep with a glob under home", map[string]any{"name": "Grep", "input": map[string]any{"pattern": "x", "path": "~", "glob": ".aws/*"}}, "search", "", "/home/dev/repo", []string{"/home/dev"}},
		{"windsurf view_file", map[string]any{"name": "view_file", "input": map[string]any{"AbsolutePath": "/home/dev/.npmrc"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.npmrc"}},
		{"unknown tool with TargetFile and content", map[string]any{"name": "put_text", "input": map[string]any{"TargetFile": "/etc/hosts", "CodeContent": "x"}}, "file_write", "", "/home/dev/repo", []string{"/etc/hosts"}},
		{"goose text_editor view", map[string]any{"name": "developer__text_editor", "input": map[string]any{"command": "view", "path": "/home/dev/.bashrc"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.bashrc"}},
		{"goose text_editor write", map[string]any{"name": "developer__text_editor", "input": map[string]any{"command": "write", "path": "/home/dev/.bashrc", "file_text": "x"}}, "file_write", "x\n", "/home/dev/repo", []string{"/home/dev/.bashrc"}},
		{"windsurf run_command", map[string]any{"name": "run_command", "input": map[string]any{"CommandLine": "rm -rf build", "Cwd": "/tmp"}}, "shell", "rm -rf build", "/tmp", nil},
		{"unknown tool with cli_command", map[string]any{"name": "call_aws", "input": map[string]any{"cli_command": "aws s3 ls"}}, "shell", "aws s3 ls", "/home/dev/repo", nil},
		{"codex write_stdin", map[string]any{"name": "write_stdin", "input": map[string]any{"session_id": 3, "chars": "cat ~/.ssh/id_rsa\n"}}, "shell", "cat ~/.ssh/id_rsa\n", "/home/dev/repo", nil},
		{"augment launch-process", map[string]any{"name": "launch-process", "input": map[string]any{"command": "make test", "cwd": "/home/dev/repo/sub", "wait": true}}, "shell", "make test", "/home/dev/repo/sub", nil},
		{"augment write-process", map[string]any{"name": "write-process", "input": map[string]any{"terminal_id": 2, "input_text": "rm -rf ~"}}, "shell", "rm -rf ~", "/home/dev/repo", nil},
		{"github merge_pull_request", map[string]any{"name": "mcp__github__merge_pull_request", "input": map[string]any{"owner": "acme", "repo": "api", "pullNumber": 42}}, "shell", "gh pr merge 42 --repo acme/api", "/home/dev/repo", nil},
		{"github push_files to the default branch", map[string]any{"name": "mcp__github__push_files", "input": map[string]any{"owner": "acme", "repo": "api", "files": []any{}}}, "shell", "git push origin HEAD:main", "/home/dev/repo", nil},
		{"equivalent quotes its fields", map[string]any{"name": "mcp__github__delete_repository", "input": map[string]any{"owner": "acme", "repo": "x; rm -rf /"}}, "shell", "gh repo delete 'acme/x; rm -rf /' --yes", "/home/dev/repo", nil},
		{"kubernetes pods_delete", map[string]any{"name": "mcp__k8s__pods_delete", "input": map[string]any{"name": "api-0", "namespace": "prod"}}, "shell", "kubectl delete pod api-0 -n prod", "/home/dev/repo", nil},
		{"filesystem delete_file is no push", map[string]any{"name": "mcp__fs__delete_file", "input": map[string]any{"path": "/home/dev/repo/x"}}, "mcp", "", "/home/dev/repo", []string{"/home/dev/repo/x"}},
		{"lsp uri", map[string]any{"name": "open_document", "input": map[string]any{"uri": "file:///home/dev/.netrc"}}, "file_read", "", "/home/dev/repo", []string{"/home/dev/.netrc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ahp := ahpOf(t, testkit.ToolEvent(tt.tool))
			tool := ahp["tool"].(map[string]any)
			if tool["family"] != tt.family {
				t.Errorf("family = %v, want %s", tool["family"], tt.family)
			}
			sh, _ := ahp["shell"].(map[string]any)
			if got, _ := sh["command"].(string); got != tt.command {
				t.Errorf("shell.command = %q, want %q", got, tt.command)
			}
			if got := ahp["workspace"].(map[string]any)["cwd"]; got != tt.cwd {
				t.Errorf("workspace.cwd = %v, want %s", got, tt.cwd)
			}
			var paths []string
			if list, ok := tool["paths"].([]any); ok {
				for _, p := range list {
					paths = append(paths, p.(map[string]any)["path"].(string))
				}
			}
			if a, b := mustJSON(t, paths), mustJSON(t, tt.paths); a != b {
				t.Errorf("paths = %s, want %s", a, b)
			}
			if strings.HasPrefix(tt.tool["name"].(string), "mcp__") && tool["mcp"] == nil {
				t.Error("an MCP tool lost input.ahp.tool.mcp")
			}
		})
	}
}

// TestShellSource: a native agent's own shell tool is read at the fields
// the agent runs; any other shell tool at every candidate, and candidates
// that disagree are named in input.ahp.shell.ambiguous.
func TestShellSource(t *testing.T) {
	tests := []struct {
		name      string
		agent     string // "" for an AHP harness
		tool      string
		input     map[string]any
		command   string
		cwd       string
		ambiguous []string
	}{
		{"gemini reads command", "gemini-cli", "run_shell_command",
			map[string]any{"command": "rm -rf ~", "action": map[string]any{"command": []any{"true"}}, "workdir": "/tmp"},
			"rm -rf ~", "/home/dev/repo", nil},
		{"gemini runs in dir_path", "gemini-cli", "run_shell_command",
			map[string]any{"command": "ls", "dir_path": "/home/dev/.aws", "cwd": "/tmp"}, "ls", "/home/dev/.aws", nil},
		{"claude ignores workdir", "claude-code", "Bash", map[string]any{"command": "ls", "workdir": "/etc"}, "ls", "/home/dev/repo", nil},
		{"codex exec_command reads cmd", "codex", "exec_command", map[string]any{"cmd": "ls", "command": "rm -rf /"}, "ls", "/home/dev/repo", nil},
		{"codex local_shell, two forms", "codex", "local_shell",
			map[string]any{"action": map[string]any{"command": []any{"ls"}}, "command": []any{"rm", "-rf", "/"}},
			"ls", "/home/dev/repo", []string{"action.command", "command"}},
		{"codex local_shell, two directories", "codex", "local_shell",
			map[string]any{"action": map[string]any{"command": []any{"ls"}, "working_directory": "/a", "workdir": "/b"}},
			"ls", "/a", []string{"action.working_directory", "action.workdir"}},
		{"unknown harness, two commands", "", "run_shell_command",
			map[string]any{"command": "rm -rf ~", "action": map[string]any{"command": []any{"true"}}},
			"rm -rf ~", "/home/dev/repo", []string{"command", "action.command"}},
		{"unknown harness, three commands", "", "shell",
			map[string]any{"command": "a", "cmd": "b", "action": map[string]any{"command": "c"}},
			"a", "/home/dev/repo", []string{"command", "cmd", "action.command"}},
		{"unknown harness, two directories", "", "shell",
			map[string]any{"command": "ls", "cwd": "/x", "dir_path": "/y"}, "ls", "/x", []string{"cwd", "dir_path"}},
		{"unknown harness, unreadable first", "", "shell",
			map[string]any{"command": []any{1}, "cmd": "rm -rf ~"}, "", "/home/dev/repo", []string{"command", "cmd"}},
		{"unknown harness, agreeing fields", "", "shell",
			map[string]any{"command": "ls", "cmd": "ls", "workdir": "/x", "cwd": "/x"}, "ls", "/x", nil},
		{"mcp tool of a native agent", "claude-code", "mcp__shell__run_command",
			map[string]any{"command": "ls", "cmd": "id"}, "ls", "/home/dev/repo", []string{"command", "cmd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input})
			if tt.agent != "" {
				ev["source"] = "urn:ahp-opa:agent:" + tt.agent
				ev["tool"].(map[string]any)["origin"] = "native"
			}
			ahp := ahpOf(t, ev)
			sh, _ := ahp["shell"].(map[string]any)
			if got, _ := sh["command"].(string); got != tt.command {
				t.Errorf("shell.command = %q, want %q", got, tt.command)
			}
			if got := ahp["workspace"].(map[string]any)["cwd"]; got != tt.cwd {
				t.Errorf("workspace.cwd = %v, want %s", got, tt.cwd)
			}
			var got []string
			list, _ := sh["ambiguous"].([]any)
			for _, f := range list {
				got = append(got, f.(string))
			}
			if mustJSON(t, got) != mustJSON(t, tt.ambiguous) {
				t.Errorf("shell.ambiguous = %q, want %q", got, tt.ambiguous)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestURLCredential: a URL carrying a credential is marked with its kind,
// and the mark never holds the credential.
func TestURLCredential(t *testing.T) {
	tests := []struct {
		url, want string
	}{
		{"https://x.example.com/?k=AKIAQWERTYUIOPASDFGH", "aws-access-key"},
		{"https://u:s3cretpass@db.example.com/", "url-password"},
		{"https://x-access-token:$GITHUB_TOKEN@github.com/o/r", ""},
		{"https://x.example.com/?k=AKIAIOSFODNN7EXAMPLE", ""},
		{"https://docs.example.com/a?b=c", ""},
	}
	for _, tt := range tests {
		ahp := ahpOf(t, testkit.ToolEvent(map[string]any{"name": "WebFetch", "input": map[string]any{"url": tt.url}}))
		u := ahp["tool"].(map[string]any)["urls"].([]any)[0].(map[string]any)
		got, _ := u["credential"].(string)
		if got != tt.want {
			t.Errorf("%s: credential = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// FuzzToolShapes: whatever shape a tool input has, the enrichment neither
// panics nor loses the tool's name and family.
func FuzzToolShapes(f *testing.F) {
	for _, s := range []string{
		`{"command": "rm -rf ~"}`, `{"cmd": ["ls"]}`, `{"action": {"command": ["ls"], "workdir": "/tmp"}}`,
		`{"command": "rm", "args": ["-rf", 1]}`, `{"args": ["get", "pods"]}`, `{"command": ["kubectl", null]}`,
		`{"path": "~/.ssh/id_rsa"}`, `{"target": "/etc/x", "content": "y"}`, `{"pattern": "~/.aws/**"}`,
		`{"workdir": "$X", "command": "ls"}`, `{"url": "https://u:p@h/?k=AKIAQWERTYUIOPASDFGH"}`,
		`{"command": "rm -rf ~", "action": {"command": ["true"], "workdir": "/"}, "cmd": "id", "cwd": "/x"}`,
		`{"server_name": "g", "tool_name": "merge_pull_request", "arguments": "{\"owner\":\"a\",\"pull_number\":1}"}`,
		`{"code": "import os", "language": "python"}`, `{"keys": "ls", "session": 1}`, `{"url": "file:///etc/shadow"}`,
		`{"cli_command": "aws s3 ls"}`, `{"resourceType": "pods", "context": "kind-x", "args": ["-A"]}`, `{"filePaths": ["~/.ssh/id_rsa", 3]}`,
	} {
		for _, name := range []string{"mcp__s__run_command", "mcp__k__kubectl", "local_shell", "shell", "Glob", "put", "WebFetch",
			"use_mcp_tool", "mcp_gh_merge_pull_request", "MCP:kubectl_get", "mcp__py__run_python", "mcp__tmux__send_keys", "gh__push_files"} {
			f.Add(name, s)
		}
	}
	f.Fuzz(func(t *testing.T, name, input string) {
		var in map[string]any
		if !utf8.ValidString(name) || json.Unmarshal([]byte(input), &in) != nil {
			return // the helper's JSON round trip would change the name
		}
		ahp := ahpOf(t, testkit.ToolEvent(map[string]any{"name": name, "input": in}))
		tool := ahp["tool"].(map[string]any)
		if tool["name"] != name || tool["family"] == "" {
			t.Fatalf("tool = %v", tool)
		}
		// An ambiguity names two or more fields, each present in the input.
		sh, _ := ahp["shell"].(map[string]any)
		if list, ok := sh["ambiguous"].([]any); ok {
			if len(list) < 2 {
				t.Fatalf("ambiguous = %v", list)
			}
			for _, f := range list {
				var v any = in
				for _, k := range strings.Split(f.(string), ".") {
					v = v.(map[string]any)[k]
				}
				if v == nil {
					t.Fatalf("ambiguous names %v, absent from %s", f, input)
				}
			}
		}
	})
}

// TestSearchScope checks what a file search reaches beyond the paths it
// names: its filter joined to its root, the session's directory when it
// names none.
func TestSearchScope(t *testing.T) {
	tests := []struct {
		name  string
		tool  map[string]any
		scope []string
	}{
		{"glob without path", map[string]any{"name": "Glob", "input": map[string]any{"pattern": "**/*.go"}}, []string{"/home/dev/repo", "/home/dev/repo/**/*.go"}},
		{"grep glob under home", map[string]any{"name": "Grep", "input": map[string]any{"pattern": "x", "path": "~", "glob": ".aws/*"}}, []string{"/home/dev/.aws/*"}},
		{"grep type", map[string]any{"name": "Grep", "input": map[string]any{"pattern": "x", "path": "/home/dev", "type": "py"}}, []string{"/home/dev/**/*.py"}},
		{"grep bare glob", map[string]any{"name": "Grep", "input": map[string]any{"pattern": "x", "path": "/home/dev", "glob": "*.json"}}, []string{"/home/dev/**/*.json"}},
		{"gemini include", map[string]any{"name": "search_file_content", "input": map[string]any{"pattern": "x", "dir_path": "/home/dev", "include": "**/*.py"}}, []string{"/home/dev/**/*.py"}},
		{"windsurf Includes", map[string]any{"name": "grep_search", "input": map[string]any{"Query": "x", "SearchPath": "/srv", "Includes": []any{"*.go", "*.md"}}}, []string{"/srv/**/*.go", "/srv/**/*.md"}},
		{"glob with a place", map[string]any{"name": "Glob", "input": map[string]any{"pattern": "~/.aws/**"}}, nil},
		{"not a file search", map[string]any{"name": "WebSearch", "input": map[string]any{"query": "x"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ahp := ahpOf(t, testkit.ToolEvent(tt.tool))
			var got []string
			scope, _ := ahp["tool"].(map[string]any)["scope"].([]any)
			for _, p := range scope {
				got = append(got, p.(map[string]any)["path"].(string))
			}
			if !slices.Equal(got, tt.scope) {
				t.Errorf("scope = %q, want %q", got, tt.scope)
			}
		})
	}
}

// TestFieldShapes: a field of paths or URLs names the same things whether
// it holds one string or a list (Copilot CLI's grep sends paths as one
// string), and a one-path field given a list names each element.
func TestFieldShapes(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		paths []string
		urls  []string
	}{
		{"copilot grep paths as a string", "grep", map[string]any{"pattern": "aws_secret_access_key", "paths": "~/.aws"}, []string{"/home/dev/.aws"}, nil},
		{"grep paths as a list", "grep", map[string]any{"pattern": "x", "paths": []any{"~/.aws"}}, []string{"/home/dev/.aws"}, nil},
		{"file_paths as a string", "remove-files", map[string]any{"file_paths": "~/.ssh/id_rsa"}, []string{"/home/dev/.ssh/id_rsa"}, nil},
		{"filePaths role as a string", "mystery", map[string]any{"filePaths": "/etc/shadow"}, []string{"/etc/shadow"}, nil},
		{"path as a list", "read_file", map[string]any{"path": []any{"~/.netrc", "README.md"}}, []string{"/home/dev/.netrc", "/home/dev/repo/README.md"}, nil},
		{"file_path role as a list", "view_file", map[string]any{"AbsolutePath": []any{"/etc/passwd"}}, []string{"/etc/passwd"}, nil},
		{"urls as a string", "web_fetch", map[string]any{"urls": "https://example.com/a"}, nil, []string{"https://example.com/a"}},
		{"url as a list", "web_fetch", map[string]any{"url": []any{"https://a.example/x", "https://b.example/y"}}, nil, []string{"https://a.example/x", "https://b.example/y"}},
		{"non-strings are skipped", "grep", map[string]any{"paths": []any{1, nil, "src"}}, []string{"/home/dev/repo/src"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))["tool"].(map[string]any)
			var paths, urls []string
			if list, ok := tool["paths"].([]any); ok {
				for _, p := range list {
					paths = append(paths, p.(map[string]any)["path"].(string))
				}
			}
			if list, ok := tool["urls"].([]any); ok {
				for _, u := range list {
					urls = append(urls, u.(map[string]any)["url"].(string))
				}
			}
			if !slices.Equal(paths, tt.paths) {
				t.Errorf("paths = %q, want %q", paths, tt.paths)
			}
			if !slices.Equal(urls, tt.urls) {
				t.Errorf("urls = %q, want %q", urls, tt.urls)
			}
		})
	}
}
