package enrich

import (
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
)

// Code-running tools: MCP servers and harnesses that run a snippet of
// code (run_python, execute_code, a notebook's execute_cell, a REPL's
// eval) do what `python3 -c CODE` does. Such a call is analysed as that
// command line, so the interpreter analysis (internal/inline) and every
// rule about what runs judge it. A tool is one when a word of its name
// runs something (run, exec, execute, eval…) or names a language, and a
// code-like field holds text.

// runWords are the words of a tool's name that say it runs what it is
// given.
var runWords = map[string]bool{
	"run": true, "exec": true, "execute": true, "eval": true, "evaluate": true,
	"interpret": true, "interpreter": true, "repl": true,
}

// codeFields are the fields that hold the code, in the order read.
// A browser tool's page script is its function (Playwright's and Chrome
// DevTools' evaluate).
var codeFields = []string{"code", "script", "source", "source_code", "sourceCode", "program", "snippet", "expression", "cell", "cell_source", "function"}

// languageFields name the code's language.
var languageFields = []string{"language", "lang", "runtime", "kernel", "kernel_name"}

// interpreters maps a language, as tools name it, to the command line
// that runs code given inline.
var interpreters = map[string][2]string{
	"python": {"python3", "-c"}, "python3": {"python3", "-c"}, "py": {"python3", "-c"}, "ipython": {"python3", "-c"},
	"javascript": {"node", "-e"}, "js": {"node", "-e"}, "node": {"node", "-e"}, "nodejs": {"node", "-e"},
	"typescript": {"node", "-e"}, "ts": {"node", "-e"},
	"ruby": {"ruby", "-e"}, "rb": {"ruby", "-e"}, "perl": {"perl", "-e"}, "php": {"php", "-r"},
	"bash": {"bash", "-c"}, "sh": {"sh", "-c"}, "shell": {"bash", "-c"}, "zsh": {"zsh", "-c"},
	"powershell": {"pwsh", "-c"}, "pwsh": {"pwsh", "-c"}, "r": {"Rscript", "-e"},
}

// codeRun returns the argv of the interpreter call a code-running tool
// amounts to, nil when the tool is not one. name is the tool's name (for
// an MCP tool, its own name).
func codeRun(name string, input ast.Object) *ast.Array {
	if input == nil {
		return nil
	}
	var code string
	for _, k := range codeFields {
		if s, ok := text(input, k); ok && strings.TrimSpace(s) != "" {
			code = s
			break
		}
	}
	if code == "" {
		return nil
	}
	runs, lang := false, ""
	for w := range strings.FieldsFuncSeq(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' }) {
		if runWords[w] {
			runs = true
		}
		if _, ok := interpreters[w]; ok && lang == "" {
			lang = w
		}
	}
	if !runs && lang == "" {
		return nil
	}
	for _, k := range languageFields {
		if s, ok := text(input, k); ok {
			if _, known := interpreters[strings.ToLower(s)]; known {
				lang = strings.ToLower(s)
				break
			}
		}
	}
	if lang == "" {
		lang = codeLanguage(code)
	}
	in := interpreters[lang]
	return ast.NewArray(ast.StringTerm(in[0]), ast.StringTerm(in[1]), ast.StringTerm(code))
}

// jsMarks are spellings only JavaScript code has among the languages
// code-running tools take: an arrow function, require, await, const/let.
var jsMarks = []string{"=>", "require(", "await ", "const ", "let ", "function(", "function ", "console.", "document.", "window.", "import("}

// codeLanguage guesses the language of code a tool names none for:
// JavaScript when it reads as such (a browser tool's page script, a
// Playwright snippet), else Python, what such tools run by default.
func codeLanguage(code string) string {
	for _, m := range jsMarks {
		if strings.Contains(code, m) {
			return "javascript"
		}
	}
	return "python"
}

// ownShell reports whether a tool is a native agent's own shell tool,
// read only at the fields the agent runs (adapters.ShellOf).
func ownShell(agent, tool string, mcp bool) bool {
	if agent == "" || mcp {
		return false
	}
	_, own := adapters.ShellOf(agent, tool)
	return own
}
