package enrich

import (
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/transport"
)

// A call is what one tool call is, read once from its event: the family it
// acts as, what it runs now, the files it names and the text it writes.
// Every analysis (paths, the shell, text run later, secrets, outbound
// text, effects) reads the call rather than the tool input's field names,
// so a tool's shape is taught here once and reaches them all.
type call struct {
	name   string // the tool's name as the harness sent it
	tool   string // lower-cased; for an MCP call, the server's tool (canonical)
	family string // what the call acts as: FamilyShell, FamilyFileWrite…
	agent  string // the native agent that asked, "" for AHP harnesses
	origin string
	server string // the MCP server the event names, "" for none
	// mcpServer is the server of an MCP call, a wrapped call's included.
	mcpServer string
	mcp       *ast.Term  // {server, tool} of an MCP call, nil for any other
	input     ast.Object // the arguments the tool acts on (a wrapped call's own)

	// equivalent is the CLI command line an MCP remote act amounts to
	// (remote.go), "" for none.
	equivalent string
	// run is what the call runs now, as shell: a command line
	// (ast.String) or an argv (*ast.Array); nil when it runs nothing.
	run ast.Value
	// workdir is the directory run starts in as the tool names it, ""
	// for the session's.
	workdir string
	// ambiguous names the input fields that disagree about what runs.
	ambiguous []string
	// sourced is set once shellSource has been read into run, workdir
	// and ambiguous (source).
	sourced bool

	// pathKeys and paths are the files a file, search or unlisted tool
	// names, with the input field each came from.
	pathKeys, paths []string
	// writes are the files a file tool writes, with the text it writes
	// to each (an apply_patch envelope's added lines per file).
	writes []fileText
	// texts are the texts a file tool writes, with the field each is in,
	// for the secrets scan.
	texts []fieldText
}

// fileText is text written to a file named as the tool names it.
type fileText struct{ raw, text string }

// fieldText is a text a tool carries, with its field and, for a list of
// edits, the edit's index (-1 otherwise).
type fieldText struct {
	field string
	edit  int
	text  string
}

// readCall reads what a call is from its event. agent is the native agent
// that asked ("" for none).
func readCall(ev *transport.Event, agent string) *call {
	c := &call{
		name: ev.Tool.Name, tool: strings.ToLower(ev.Tool.Name), agent: agent,
		origin: ev.Tool.Origin, server: ev.Tool.MCP.Server, input: ev.Tool.Input,
	}
	fam := family(c.name, ev.Tool.Kind, c.origin)
	if server, t, args, ok := mcpWrapped(c.tool, c.input); ok {
		// A harness tool that calls another server's tool is that call.
		fam, c.input = FamilyMCP, args
		c.mcp, c.mcpServer = mcpItem(server, t), server
		c.tool = canonicalMCPTool(t)
	} else if fam == FamilyMCP {
		server, t := mcpTool(c.name, ev.Tool.MCP)
		c.mcp, c.mcpServer = mcpItem(server, t), server
		// Servers spell one tool mergePullRequest or merge-pull-request.
		c.tool = canonicalMCPTool(t)
	}
	c.family = fam
	// A tool that acts as a shell or file tool gets that family (tools.go, "Tool shapes").
	if f := c.actingFamily(); f != "" {
		c.family = f
	}
	c.readRun()
	switch c.family {
	case FamilyFileRead, FamilyFileWrite, FamilyFileEdit, FamilySearch, FamilyMCP, FamilyOther:
		c.pathKeys, c.paths = toolPaths(c.tool, c.input)
	}
	if c.family == FamilyFileWrite || c.family == FamilyFileEdit {
		c.texts = writtenTexts(c.tool, c.input)
		c.writes = toolWrites(c.paths, c.texts)
	}
	return c
}

func mcpItem(server, tool string) *ast.Term {
	return ast.ObjectTerm(
		[2]*ast.Term{keyServer, ast.StringTerm(server)},
		[2]*ast.Term{keyTool, ast.StringTerm(tool)},
	)
}

// codeRun is the interpreter call the tool's code amounts to (coderun.go);
// the server's name may name the language (mcp__node__eval).
func (c *call) codeRun() *ast.Array {
	name := c.name + " " + c.server
	if c.mcp != nil {
		// A wrapped call's own tool and server (use_mcp_tool naming
		// playwright's browser_evaluate).
		name += " " + c.tool + " " + c.mcpServer
	}
	return codeRun(name, c.input)
}

// readRun finds what a shell-family call runs now: the CLI command of an
// MCP remote act, the interpreter call of a code-running tool, else the
// command at the fields the tool's shape names.
func (c *call) readRun() {
	if c.family != FamilyShell {
		return
	}
	if c.mcp != nil && c.equivalent == "" {
		c.equivalent = equivalentCommand(c.tool, c.input)
	}
	if c.equivalent != "" {
		c.run = ast.String(c.equivalent)
		return
	}
	if !ownShell(c.agent, c.tool, c.mcp != nil) {
		if run := c.codeRun(); run != nil {
			c.run = run
			return
		}
	}
	c.source()
	if s, ok := c.run.(ast.String); ok && c.mcp != nil && !startsWithKnownProgram(string(s)) {
		if client := serverClient(c.mcpServer); client != nil {
			// A data store's server runs its own language, not a shell:
			// FLUSHALL is the store's command, not a program.
			argv := make([]*ast.Term, 0, len(client)+1)
			for _, w := range client {
				argv = append(argv, ast.StringTerm(w))
			}
			if len(client) == 1 {
				c.run = ast.String(client[0] + " " + string(s))
			} else {
				c.run = ast.NewArray(append(argv, ast.StringTerm(string(s)))...)
			}
			return
		}
	}
	if s, ok := c.run.(ast.String); ok && powershellTools[c.tool] {
		// A PowerShell tool's command is PowerShell code: analysed as
		// pwsh -Command runs it.
		c.run = ast.NewArray(ast.StringTerm("pwsh"), ast.StringTerm("-Command"), ast.StringTerm(string(s)))
	}
}

// source reads the command at the fields the tool's shape names, and
// the directory it runs in (shellSource), once.
func (c *call) source() (ast.Value, string, []string) {
	if !c.sourced {
		c.sourced = true
		c.run, c.workdir, c.ambiguous = shellSource(c.agent, c.tool, c.mcp != nil, c.input)
	}
	return c.run, c.workdir, c.ambiguous
}

// writtenTexts are the texts a file tool writes, each with its field:
// the content fields however a harness spells them, each edit's new text,
// and an apply_patch envelope (Codex's hook payload carries it as
// command).
func writtenTexts(tool string, input ast.Object) []fieldText {
	var out []fieldText
	seen := map[string]bool{}
	for _, k := range ContentKeys {
		if s, ok := text(input, k); ok {
			out = append(out, fieldText{field: k, edit: -1, text: s})
			seen[k] = true
		}
	}
	if input != nil {
		input.Foreach(func(k, v *ast.Term) {
			ks, ok := k.Value.(ast.String)
			if !ok || seen[string(ks)] {
				return
			}
			switch {
			case isRole(editListKeys, string(ks)):
				arr, _ := v.Value.(*ast.Array)
				for i := 0; arr != nil && i < arr.Len(); i++ {
					switch e := arr.Elem(i).Value.(type) {
					case ast.String:
						out = append(out, fieldText{field: string(ks), edit: i, text: string(e)})
					case ast.Object:
						walkContent(e, func(s string) {
							out = append(out, fieldText{field: string(ks), edit: i, text: s})
						})
					}
				}
			case isRole(contentRoleKeys, string(ks)):
				walkContent(ast.NewObject([2]*ast.Term{k, v}), func(s string) {
					out = append(out, fieldText{field: string(ks), edit: -1, text: s})
				})
			}
		})
	}
	if s, ok := text(input, "command"); ok && !seen["command"] && (tool == "apply_patch" || strings.Contains(s, patchBegin)) {
		out = append(out, fieldText{field: "command", edit: -1, text: s})
	}
	return out
}
