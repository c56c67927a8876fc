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
		"local_shell":    {kindShell, "command"}, // command is an argv array, workdir beside it
		"exec_command":   {kindShell, "cmd"},
		"container.exec": {kindShell, "command"},
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
