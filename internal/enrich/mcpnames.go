package enrich

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/effects"
)

// MCP tools as each harness names them. Claude Code and Codex say
// mcp__server__tool; Gemini CLI says mcp_server_tool (its adapter reads
// the parts from mcp_context when the payload has it); Cursor says
// MCP:tool; Cline and Roo reach every server through one tool,
// use_mcp_tool, whose input names the server and the tool and carries the
// arguments as an object or as JSON text. All of them are MCP calls, so
// that a server's merge_pull_request is judged alike whoever asks.

// maxWrappedArgs bounds the JSON text of a wrapped call's arguments that
// is decoded: the event is bounded already, this keeps one field from
// being decoded twice at full size.
const maxWrappedArgs = 256 << 10

// isMCPName reports whether a tool name is an MCP tool's in any harness's
// spelling.
func isMCPName(name string) bool {
	switch {
	case strings.HasPrefix(name, "mcp__"), strings.HasPrefix(name, "MCP:"):
		return true
	case strings.HasPrefix(name, "mcp_"):
		// mcp_server_tool: a server and a tool part.
		return strings.Contains(name[len("mcp_"):], "_")
	}
	return false
}

// mcpNameParts splits a Gemini CLI (mcp_server_tool) or Cursor (MCP:tool)
// name. A Gemini name is ambiguous where the server's name has an
// underscore: the first split whose tool part is a tool the library knows
// wins, else the server is the first word.
func mcpNameParts(name string) (server, tool string) {
	if t, ok := strings.CutPrefix(name, "MCP:"); ok {
		return "", t
	}
	rest, ok := strings.CutPrefix(name, "mcp_")
	if !ok || strings.HasPrefix(rest, "_") {
		return "", ""
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == '_' && knownMCPTool(strings.ToLower(rest[i+1:])) {
			return rest[:i], rest[i+1:]
		}
	}
	server, tool, _ = strings.Cut(rest, "_")
	return server, tool
}

// knownMCPTool reports whether the library has something to say about a
// tool name (lower case): a CLI it amounts to, a family it acts as, a row
// of the effects table, a web search.
func knownMCPTool(t string) bool {
	if _, ok := mcpEquivalents[t]; ok {
		return true
	}
	if _, ok := actsAsFolded[foldName(t)]; ok {
		return true
	}
	if webSearchTools[t] || programTools[t] {
		return true
	}
	if m, err := effects.Builtin(); err == nil && m.KnownTool(t) {
		return true
	}
	return false
}

// qualifiedMCPName splits a name that qualifies a known MCP tool with its
// server: Goose's extension__tool (github__merge_pull_request), and
// server.tool or server/tool of other clients. Only a tool part the
// library knows counts, so that an agent's own tool with such a name stays
// what it is; "" when there is none.
func qualifiedMCPName(name string) (server, tool string) {
	for _, sep := range []string{"__", ".", "/"} {
		i := strings.LastIndex(name, sep)
		if i <= 0 || i+len(sep) >= len(name) {
			continue
		}
		if t := name[i+len(sep):]; knownMCPTool(strings.ToLower(t)) {
			return name[:i], t
		}
	}
	return "", ""
}

// canonicalTools maps the folded name (foldName) of every MCP tool the
// library knows to its spelling in the tables: mergePullRequest and
// merge-pull-request are merge_pull_request.
var canonicalTools = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	add := func(n string) {
		if _, dup := m[foldName(n)]; !dup {
			m[foldName(n)] = n
		}
	}
	for n := range mcpEquivalents {
		add(n)
	}
	for n := range actsAs {
		add(n)
	}
	for n := range webSearchTools {
		add(n)
	}
	if em, err := effects.Builtin(); err == nil {
		for _, n := range em.ToolNames() {
			add(n)
		}
	}
	return m
})

// canonicalMCPTool returns the tables' spelling (lower case) of an MCP
// tool's name as the server spells it, or the name lower-cased when the
// library does not know it. A snake_case name is the tables' own
// spelling: it is returned as it is, so that the common call never loads
// the effects table for this.
func canonicalMCPTool(t string) string {
	lower := strings.ToLower(t)
	if lower == t && !strings.Contains(t, "-") {
		return t
	}
	if knownMCPTool(lower) {
		return lower
	}
	if c, ok := canonicalTools()[foldName(lower)]; ok {
		return c
	}
	return lower
}

// mcpWrappers are harness tools that call any MCP server's tool, with the
// fields naming the server, the tool and the arguments.
var mcpWrappers = map[string][3]string{
	"use_mcp_tool":  {"server_name", "tool_name", "arguments"}, // Cline, Roo
	"call_mcp_tool": {"server_name", "tool_name", "arguments"},
	"mcp_call_tool": {"server", "tool", "arguments"},
}

// mcpWrapped returns the server, tool and arguments of a call made
// through a wrapper tool (tool is the lower-cased tool name); ok is false
// for any other call, or when the wrapper names no tool.
func mcpWrapped(tool string, input ast.Object) (server, name string, args ast.Object, ok bool) {
	w, isWrapper := mcpWrappers[tool]
	if !isWrapper {
		return "", "", nil, false
	}
	name, _ = text(input, w[1])
	if name == "" {
		return "", "", nil, false
	}
	server, _ = text(input, w[0])
	switch v := field(input, w[2]).(type) {
	case ast.Object:
		args = v
	case ast.String:
		args = decodeObject(string(v))
	}
	if args == nil {
		args = ast.NewObject()
	}
	return server, name, args, true
}

// decodeObject decodes JSON text that holds an object; nil when it does
// not (or is past maxWrappedArgs).
func decodeObject(s string) ast.Object {
	s = strings.TrimSpace(s)
	if len(s) > maxWrappedArgs || !strings.HasPrefix(s, "{") {
		return nil
	}
	var x map[string]any
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return nil
	}
	v, err := ast.InterfaceToValue(x)
	if err != nil {
		return nil
	}
	o, _ := v.(ast.Object)
	return o
}
