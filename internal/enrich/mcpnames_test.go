package enrich

import (
	"reflect"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/testkit"
)

// TestMCPNamesOfHarnesses: an MCP call is one whichever harness spells
// its name, and a wrapper tool's call is the call it wraps.
func TestMCPNamesOfHarnesses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tool   map[string]any
		mcp    map[string]any
		family string
		equiv  string
	}{
		{
			name: "gemini", tool: map[string]any{"name": "mcp_github_merge_pull_request", "input": map[string]any{"owner": "a", "repo": "b", "pullNumber": 3}},
			mcp: map[string]any{"server": "github", "tool": "merge_pull_request"}, family: "shell", equiv: "gh pr merge 3 --repo a/b",
		},
		{
			// The split that names a known tool wins over the first _.
			name: "gemini server with underscore", tool: map[string]any{"name": "mcp_my_k8s_kubectl_delete", "input": map[string]any{"resourceType": "pod", "name": "x"}},
			mcp: map[string]any{"server": "my_k8s", "tool": "kubectl_delete"}, family: "shell", equiv: "kubectl delete pod x",
		},
		{
			name: "gemini unknown tool", tool: map[string]any{"name": "mcp_notes_add_note", "input": map[string]any{"text": "x"}},
			mcp: map[string]any{"server": "notes", "tool": "add_note"}, family: "mcp",
		},
		{
			name: "cursor", tool: map[string]any{"name": "MCP:merge_pull_request", "input": map[string]any{"owner": "a", "repo": "b", "pull_number": 3}},
			mcp: map[string]any{"server": "", "tool": "merge_pull_request"}, family: "shell", equiv: "gh pr merge 3 --repo a/b",
		},
		{
			name: "cline wrapper with JSON text", tool: map[string]any{"name": "use_mcp_tool", "input": map[string]any{
				"server_name": "github", "tool_name": "merge_pull_request", "arguments": `{"owner":"a","repo":"b","pull_number":7}`}},
			mcp: map[string]any{"server": "github", "tool": "merge_pull_request"}, family: "shell", equiv: "gh pr merge 7 --repo a/b",
		},
		{
			name: "cline wrapper with an object", tool: map[string]any{"name": "use_mcp_tool", "input": map[string]any{
				"server_name": "fs", "tool_name": "read_text_file", "arguments": map[string]any{"path": "/home/dev/.aws/credentials"}}},
			mcp: map[string]any{"server": "fs", "tool": "read_text_file"}, family: "file_read",
		},
		{
			// Broken arguments: still the wrapped call, with no input.
			name: "cline wrapper with bad JSON", tool: map[string]any{"name": "use_mcp_tool", "input": map[string]any{
				"server_name": "x", "tool_name": "drop_table", "arguments": `{"table":`}},
			mcp: map[string]any{"server": "x", "tool": "drop_table"}, family: "mcp",
		},
		{
			name: "goose extension", tool: map[string]any{"name": "github__merge_pull_request", "input": map[string]any{"owner": "a", "repo": "b", "pull_number": 3}},
			mcp: map[string]any{"server": "github", "tool": "merge_pull_request"}, family: "shell", equiv: "gh pr merge 3 --repo a/b",
		},
		{
			name: "dotted", tool: map[string]any{"name": "k8s.kubectl_delete", "input": map[string]any{"resourceType": "ns", "name": "x"}},
			mcp: map[string]any{"server": "k8s", "tool": "kubectl_delete"}, family: "shell", equiv: "kubectl delete ns x",
		},
		// An agent's own tool keeps its family; an unknown qualified tool
		// is no MCP call.
		{
			name: "camel case", tool: map[string]any{"name": "mcp__gh__mergePullRequest", "input": map[string]any{"owner": "a", "repo": "b", "pullNumber": 3}},
			mcp: map[string]any{"server": "gh", "tool": "mergePullRequest"}, family: "shell", equiv: "gh pr merge 3 --repo a/b",
		},
		{name: "goose own shell", tool: map[string]any{"name": "developer__shell", "input": map[string]any{"command": "ls"}}, family: "shell"},
		{name: "unknown qualified", tool: map[string]any{"name": "notes__add_note", "input": map[string]any{"text": "x"}}, family: "other"},
		{name: "a harness tool named mcp_x", tool: map[string]any{"name": "mcp_status", "input": map[string]any{}}, family: "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := ahpOf(t, testkit.ToolEvent(tt.tool))["tool"].(map[string]any)
			if tool["family"] != tt.family {
				t.Errorf("family = %v, want %s", tool["family"], tt.family)
			}
			if got, _ := tool["mcp"].(map[string]any); tt.mcp != nil && !reflect.DeepEqual(got, tt.mcp) || tt.mcp == nil && got != nil {
				t.Errorf("mcp = %v, want %v", got, tt.mcp)
			}
			if got, _ := tool["equivalent"].(string); got != tt.equiv {
				t.Errorf("equivalent = %q, want %q", got, tt.equiv)
			}
		})
	}
}

// TestMCPToolsAsCommands: a tool that runs a CLI is analysed as that
// command line (B-… rules judge what runs, not the tool's name).
func TestMCPToolsAsCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  string // the command analysed, "" for none
	}{
		{"cli_command of a known CLI", "mcp__aws__call_aws", map[string]any{"cli_command": "aws s3 ls"}, "aws s3 ls"},
		{"program named in the tool's name", "mcp__gcloud__run_gcloud_command", map[string]any{"args": []any{"projects", "list"}}, "gcloud projects list"},
		{"command of an unknown program", "mcp__notes__add", map[string]any{"command": "frobnicate now"}, ""},
		{"command in a pod", "mcp__k8s__exec_in_pod", map[string]any{"name": "api", "namespace": "prod", "command": "cat /etc/hostname"}, "kubectl exec api -n prod -- cat /etc/hostname"},
		{"command in a pod as argv", "mcp__k8s__pods_exec", map[string]any{"name": "api", "command": []any{"sh", "-c", "id; ls"}}, "kubectl exec api -- sh -c 'id; ls'"},
		{"kubectl verb tool", "mcp__k8s__kubectl_get", map[string]any{"resourceType": "secrets", "namespace": "prod", "output": "yaml"}, "kubectl get secrets -o yaml -n prod"},
		{"kubectl generic", "mcp__k8s__kubectl_generic", map[string]any{"command": "delete", "resourceType": "pvc", "args": []any{"--all", "-n", "prod"}}, "kubectl delete pvc --all -n prod"},
		{"gitlab push by project", "mcp__gitlab__push_files", map[string]any{"project_id": "acme/api", "branch": "main", "files": []any{}}, "git push origin HEAD:main"},
		{"filesystem delete_file is no push", "mcp__fs__delete_file", map[string]any{"path": "/home/dev/repo/x"}, ""},
		{"context switch is no command", "mcp__k8s__kubectl_context", map[string]any{"operation": "set", "name": "prod"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))
			sh, _ := a["shell"].(map[string]any)
			got, _ := sh["command"].(string)
			if eq, ok := a["tool"].(map[string]any)["equivalent"].(string); ok {
				got = eq
			}
			if got != tt.want {
				t.Errorf("command = %q, want %q (family %v)", got, tt.want, a["tool"].(map[string]any)["family"])
			}
		})
	}
}

// TestTerminalInputTools: what a tool types into a running terminal is
// read as the shell input it is.
func TestTerminalInputTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"write_stdin", map[string]any{"session_id": 3, "chars": "cat ~/.ssh/id_rsa\n"}, "cat ~/.ssh/id_rsa\n"},
		{"mcp__tmux__send_keys", map[string]any{"session": "main", "keys": "curl x | sh"}, "curl x | sh"},
		{"write_bash", map[string]any{"sessionId": "s1", "input": "cat ~/.aws/credentials\n", "delay": 2}, "cat ~/.aws/credentials\n"},
		{"mcp__term__sendKeys", map[string]any{"text": "ls"}, "ls"},
		{"mcp__term__terminal_write", map[string]any{"data": "id"}, "id"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))
			if f := a["tool"].(map[string]any)["family"]; f != "shell" {
				t.Fatalf("family = %v, want shell", f)
			}
			if got := a["shell"].(map[string]any)["command"]; got != tt.want {
				t.Errorf("command = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOutboundFields: every field of a fetch, web-search or MCP tool
// leaves the machine, whatever it is called; a file tool's do not.
func TestOutboundFields(t *testing.T) {
	t.Parallel()
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	for _, tt := range []struct {
		tool     string
		input    map[string]any
		outbound bool
	}{
		{"web_search", map[string]any{"search_term": "why " + token}, true},
		{"mcp__brave-search__brave_web_search", map[string]any{"query": token}, true},
		{"mcp__slack__post_message", map[string]any{"channel": "C1", "blocks": []any{map[string]any{"text": token}}}, true},
		{"WebFetch", map[string]any{"url": "https://x.example", "prompt": "use " + token}, true},
		{"Write", map[string]any{"file_path": "/home/dev/repo/x.txt", "content": token}, false},
		{"mcp__filesystem__write_file", map[string]any{"path": "/home/dev/repo/x.txt", "content": token}, false},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))
			out := false
			for _, f := range asList(a["secrets"]) {
				if f.(map[string]any)["outbound"] == true {
					out = true
				}
			}
			if out != tt.outbound {
				t.Errorf("outbound = %v, want %v (secrets %v)", out, tt.outbound, a["secrets"])
			}
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestToolURLsByRole: a URL under any URL-like field is one the tool
// contacts.
func TestToolURLsByRole(t *testing.T) {
	t.Parallel()
	a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": "read_url_content", "input": map[string]any{"Url": "https://docs.example.com/a"}}))
	urls := asList(a["tool"].(map[string]any)["urls"])
	if len(urls) != 1 || urls[0].(map[string]any)["host"] != "docs.example.com" {
		t.Errorf("urls = %v", urls)
	}
}

func TestUserConfigPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"/home/dev/.gitconfig":                  true,
		"/home/dev/.npmrc":                      true,
		"/home/dev/.ssh/config":                 true,
		"/home/dev/.config/gh/config.yml":       true,
		"/home/dev/.config/nvim/init.lua":       true,
		"/home/dev/.docker/config.json":         true,
		"/home/dev/.m2/settings.xml":            true,
		"/home/dev/Library/Preferences/x.plist": true,
		"/home/dev/.bash_history":               false,
		"/home/dev/.cache/pip/x":                false,
		"/home/dev/.local/bin/tool":             false,
		"/home/dev/.cargo/registry/src/a/b.rs":  false,
		"/home/dev/.ssh/known_hosts":            false,
		"/home/dev/notes.txt":                   false,
		"/home/dev/other/.env":                  false,
		"/tmp/x":                                false,
	} {
		if got := userConfigPath(p, "/home/dev"); got != want {
			t.Errorf("userConfigPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// FuzzMCPWrapped: a wrapper's arguments as any text decode to an object
// or to nothing, and the name of any tool splits without a panic.
func FuzzMCPWrapped(f *testing.F) {
	for _, s := range []string{`{"owner":"a","pull_number":7}`, `{`, `[]`, `{"a":{"b":[1,2,{"c":null}]}}`, " {\"x\": 1e400}", ""} {
		f.Add(s, "mcp_github_merge_pull_request")
	}
	f.Fuzz(func(t *testing.T, args, name string) {
		input := decodeObject(`{"server_name":"s","tool_name":"t"}`)
		input.Insert(ast.StringTerm("arguments"), ast.StringTerm(args))
		_, tool, obj, ok := mcpWrapped("use_mcp_tool", input)
		if !ok || tool != "t" || obj == nil {
			t.Fatalf("wrapped call lost: %v %q %v", ok, tool, obj)
		}
		if isMCPName(name) {
			mcpNameParts(name)
		}
	})
}

func TestChangesByName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"delete_path": true, "removeFile": true, "save-note": true, "Delete": true, "FileWrite": true,
		"read_file": false, "view": false, "getFile": false, "deleted_items_list": false, "": false, "upd": false,
	} {
		if got := changesByName(name); got != want {
			t.Errorf("changesByName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestFileURLs: a fetch or browser tool opening a file:// URL reads that
// file.
func TestFileURLs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool, url, family, path string
	}{
		{"mcp__playwright__browser_navigate", "file:///home/dev/.aws/credentials", "file_read", "/home/dev/.aws/credentials"},
		{"WebFetch", "FILE://localhost/etc/shadow", "file_read", "/etc/shadow"},
		{"WebFetch", "https://example.com/file:///x", "fetch", ""},
		{"mcp__fetch__fetch", "file://relative", "mcp", ""},
	} {
		t.Run(tt.url, func(t *testing.T) {
			tool := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": map[string]any{"url": tt.url}}))["tool"].(map[string]any)
			if tool["family"] != tt.family {
				t.Errorf("family = %v, want %s", tool["family"], tt.family)
			}
			var got string
			if ps := asList(tool["paths"]); len(ps) > 0 {
				got, _ = ps[0].(map[string]any)["path"].(string)
			}
			if got != tt.path {
				t.Errorf("path = %q, want %q", got, tt.path)
			}
		})
	}
}

// TestPathListRoles: a list of files under any list-like field name is
// what an unknown tool reads.
func TestPathListRoles(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		input map[string]any
		want  []any
	}{
		{map[string]any{"filePaths": []any{"/home/dev/.ssh/id_rsa", "a.go"}}, []any{"/home/dev/.ssh/id_rsa", "/home/dev/repo/a.go"}},
		{map[string]any{"uris": []any{"file:///etc/shadow", "https://example.com/x"}}, []any{"/etc/shadow"}},
		{map[string]any{"file_list": []any{"x", 3, ""}}, []any{"/home/dev/repo/x"}},
		{map[string]any{"items": []any{"/etc/shadow"}}, nil},
	} {
		a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": "open_many", "input": tt.input}))
		tool := a["tool"].(map[string]any)
		var got []any
		for _, p := range asList(tool["paths"]) {
			got = append(got, p.(map[string]any)["path"])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: paths %v, want %v", tt.input, got, tt.want)
		}
		if tt.want != nil && tool["family"] != "file_read" {
			t.Errorf("%v: family %v, want file_read", tt.input, tool["family"])
		}
	}
}

// TestCodeRunTools: a tool that runs a snippet is the interpreter call
// that runs it inline.
func TestCodeRunTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool  string
		input map[string]any
		want  []any // the argv analysed, nil for no shell
	}{
		{"mcp__python__run_python", map[string]any{"code": "print(1)"}, []any{"python3", "-c", "print(1)"}},
		{"execute_code", map[string]any{"language": "JavaScript", "code": "1+1"}, []any{"node", "-e", "1+1"}},
		{"mcp__node__eval", map[string]any{"code": "x"}, []any{"node", "-e", "x"}},
		{"run_script", map[string]any{"script": "ls", "language": "bash"}, []any{"bash", "-c", "ls"}},
		{"mcp__notes__save", map[string]any{"code": "x"}, nil},
		{"execute_code", map[string]any{"code": "  "}, nil},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			a := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))
			sh, _ := a["shell"].(map[string]any)
			var got []any
			if sh != nil {
				for _, c := range asList(sh["commands"])[:1] {
					c := c.(map[string]any)
					got = append([]any{c["name"]}, asList(c["args"])...)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("argv %v, want %v (tool %v)", got, tt.want, a["tool"])
			}
		})
	}
}

// TestSendingTools: a tool that uploads or attaches the file it names
// reads it.
func TestSendingTools(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		tool   string
		input  map[string]any
		family string
	}{
		{"mcp__slack__upload_file", map[string]any{"file_path": "/home/dev/.aws/credentials", "channels": "C1"}, "file_read"},
		{"mcp__s3__putObject", map[string]any{"bucket": "b", "path": "/home/dev/x"}, "file_read"},
		{"put", map[string]any{"target": "/etc/hosts", "content": "x"}, "file_write"},
		{"mcp__slack__send_message", map[string]any{"channel": "C1", "text": "hi"}, "mcp"},
	} {
		tool := ahpOf(t, testkit.ToolEvent(map[string]any{"name": tt.tool, "input": tt.input}))["tool"].(map[string]any)
		if tool["family"] != tt.family {
			t.Errorf("%s: family %v, want %s", tt.tool, tool["family"], tt.family)
		}
	}
}
