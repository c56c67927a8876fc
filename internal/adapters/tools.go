package adapters

import "strings"

// AHP tool kinds the mapping sets; the engine's families have the same
// names, and a kind wins over the engine's own name table.
const (
	kindShell     = "shell"
	kindFileRead  = "file_read"
	kindFileWrite = "file_write"
	kindFileEdit  = "file_edit"
	kindSearch    = "search"
	kindFetch     = "fetch"
	kindTask      = "task"
	kindMCP       = "mcp"
	kindOther     = "other"
)

// toolShape says what a native tool is and where its input keeps what
// rules read most: the command of a shell tool, the path of a file tool.
// The engine reads tool.input.command (a string, or an argv array) and the
// path keys file_path, path, filePath…, so these inputs pass through
// verbatim; the table documents the shapes and the tests check them.
type toolShape struct {
	kind string
	key  string // the input key holding the command, path or URL; "" when none
}

// toolShapes is the one table of native tool names, per agent, lower-cased.
// Names not listed map to kind "other" (or "mcp" when the agent marks the
// call as MCP), and the engine's own name table still applies to them.
var toolShapes = map[string]map[string]toolShape{
	ClaudeCode: {
		"bash":         {kindShell, "command"},
		"powershell":   {kindShell, "command"},
		"read":         {kindFileRead, "file_path"},
		"notebookread": {kindFileRead, "notebook_path"},
		"write":        {kindFileWrite, "file_path"},
		"edit":         {kindFileEdit, "file_path"},
		"multiedit":    {kindFileEdit, "file_path"},
		"notebookedit": {kindFileEdit, "notebook_path"},
		"glob":         {kindSearch, "path"},
		"grep":         {kindSearch, "path"},
		"ls":           {kindSearch, "path"},
		"webfetch":     {kindFetch, "url"},
		"websearch":    {kindSearch, ""},
		"task":         {kindTask, ""},
		"agent":        {kindTask, ""},
	},
	Codex: {
		"bash":           {kindShell, "command"}, // exec_command arrives as Bash (CONTRACTS R5)
		"shell":          {kindShell, "command"},
		"local_shell":    {kindShell, "command"}, // action.command, an argv array (shellShapes)
		"exec_command":   {kindShell, "cmd"},
		"container.exec": {kindShell, "command"},
		"write_stdin":    {kindShell, "chars"},      // typed into an exec_command session
		"apply_patch":    {kindFileEdit, "command"}, // the patch envelope names the files
		"view_image":     {kindFileRead, "path"},
		"web_search":     {kindSearch, ""},
	},
	GeminiCLI: {
		"run_shell_command":   {kindShell, "command"},
		"read_file":           {kindFileRead, "file_path"},
		"read_many_files":     {kindFileRead, "include"},
		"write_file":          {kindFileWrite, "file_path"},
		"replace":             {kindFileEdit, "file_path"},
		"glob":                {kindSearch, "dir_path"},
		"search_file_content": {kindSearch, "dir_path"},
		"grep":                {kindSearch, "dir_path"},
		"list_directory":      {kindSearch, "dir_path"},
		"web_fetch":           {kindFetch, "prompt"}, // URLs are inside the prompt text
		"google_web_search":   {kindSearch, ""},
	},
	Cursor: {
		"shell":  {kindShell, "command"},
		"read":   {kindFileRead, "file_path"},
		"write":  {kindFileWrite, "file_path"},
		"edit":   {kindFileEdit, "file_path"},
		"delete": {kindFileEdit, "file_path"},
		"grep":   {kindSearch, "path"},
		"task":   {kindTask, ""},
	},
	Copilot: {
		"bash":       {kindShell, "command"},
		"powershell": {kindShell, "command"},
		"view":       {kindFileRead, "path"},
		"create":     {kindFileWrite, "path"},
		"edit":       {kindFileEdit, "path"},
		"glob":       {kindSearch, "path"},
		"grep":       {kindSearch, "path"},
		"web_fetch":  {kindFetch, "url"},
		"task":       {kindTask, ""},
	},
}

// Field is where a value sits in a tool's input: one key, or the keys
// down through nested objects ({"action", "command"}).
type Field []string

func (f Field) String() string { return strings.Join(f, ".") }

// In returns the value at f in input, nil when absent.
func (f Field) In(input map[string]any) any {
	var v any = input
	for _, k := range f {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// Shell says where one of an agent's own shell tools keeps what it runs.
// The agent builds the tool's input from the model's arguments and runs
// exactly these fields; any other field of the input, however named
// (a "command" beside Codex's "cmd", a "workdir" beside Gemini's
// "dir_path"), is ignored by the agent and so must be by the analysis.
type Shell struct {
	// Command lists the fields the agent executes: one, or for a tool the
	// agent sends in more than one form (Codex local_shell), each form.
	// Several present with different values make the call ambiguous.
	Command []Field
	// Dir lists the fields naming the directory the command runs in, read
	// the same way; none means the session's directory. A relative one
	// starts from the session's directory.
	Dir []Field
}

// shellShapes is, per agent, where each shell tool of toolShapes keeps its
// command and directory (CONTRACTS.md, and docs/hooks.md "Which field").
var shellShapes = map[string]map[string]Shell{
	ClaudeCode: {
		"bash":       {Command: []Field{{"command"}}}, // runs in the session's shell directory
		"powershell": {Command: []Field{{"command"}}},
	},
	Codex: {
		"bash":           {Command: []Field{{"command"}}, Dir: []Field{{"workdir"}}},
		"shell":          {Command: []Field{{"command"}}, Dir: []Field{{"workdir"}}},
		"exec_command":   {Command: []Field{{"cmd"}}, Dir: []Field{{"workdir"}}},
		"container.exec": {Command: []Field{{"command"}}, Dir: []Field{{"workdir"}}},
		// Text typed into the terminal of an earlier exec_command: shell
		// input that no other hook sees (docs/policy.md, "Blind spots").
		"write_stdin": {Command: []Field{{"chars"}}},
		// The model's local_shell call is {action: {command, working_directory}};
		// the hook may flatten it to {command, workdir}.
		"local_shell": {
			Command: []Field{{"action", "command"}, {"command"}},
			Dir:     []Field{{"action", "working_directory"}, {"action", "workdir"}, {"workdir"}},
		},
	},
	GeminiCLI: {
		"run_shell_command": {Command: []Field{{"command"}}, Dir: []Field{{"dir_path"}}},
	},
	Cursor: {
		"shell": {Command: []Field{{"command"}}, Dir: []Field{{"cwd"}}},
	},
	Copilot: {
		"bash":       {Command: []Field{{"command"}}},
		"powershell": {Command: []Field{{"command"}}},
	},
}

// ShellOf returns where agent's own shell tool name keeps its command and
// directory; ok is false for any other tool, an MCP tool included.
func ShellOf(agent, name string) (Shell, bool) {
	s, ok := shellShapes[agent][strings.ToLower(name)]
	return s, ok
}

// shellDir returns the directory one of agent's own shell tools runs in,
// as its input names it, or "" for the session's directory.
func shellDir(agent, name string, input map[string]any) string {
	s, ok := ShellOf(agent, name)
	if !ok {
		return ""
	}
	for _, f := range s.Dir {
		if d, ok := f.In(input).(string); ok && d != "" {
			return d
		}
	}
	return ""
}

// shapeOf returns the table entry of a native tool name.
func shapeOf(agent, name string) (toolShape, bool) {
	s, ok := toolShapes[agent][strings.ToLower(name)]
	return s, ok
}

// kindOf classifies a native tool; mcp says the agent marked it as MCP.
func kindOf(agent, name string, mcp bool) string {
	if mcp {
		return kindMCP
	}
	if s, ok := shapeOf(agent, name); ok {
		return s.kind
	}
	return kindOther
}
