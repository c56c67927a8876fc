package enrich

import (
	"regexp"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/redact"
	"github.com/ahp-opa/ahp-opa/internal/secretscan"
	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// Outbound text: a live token in what a call sends away is a leak,
// whatever the field. The secrets scan (secrets.go) also reads these and
// marks what it finds there outbound: true.

var keyOutbound = ast.StringTerm("outbound")

// webSearchTools send their query to a search engine.
var webSearchTools = map[string]bool{
	"websearch": true, "google_web_search": true, "web_search": true, "search_web": true,
	"web-search": true, "brave_web_search": true, "tavily-search": true, "tavily_search": true,
	"perplexity_ask": true, "exa_search": true, "web_search_exa": true,
}

// mcpOutboundKeys are the fields of a tool nobody listed that carry a
// request: an HTTP client's URL, body and headers.
var mcpOutboundKeys = []string{"url", "uri", "body", "data", "json", "payload", "headers"}

// shellSenders are programs whose arguments go out over the network.
var shellSenders = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "http": true, "https": true, "xh": true,
	"curlie": true, "httpie": true, "nc": true, "ncat": true, "netcat": true, "socat": true,
	"telnet": true, "grpcurl": true, "websocat": true,
}

// forgeTexts are the gh subcommands whose arguments are published: an
// issue's or pull request's title, body and comments, a gist.
var forgeTexts = map[string]bool{"issue": true, "pr": true, "gist": true, "discussion": true}

// postsText reports whether a command posts its arguments as text others
// read (gh issue comment --body …).
func postsText(c *shell.Command) bool {
	args := c.Args()
	return c.Name == "gh" && len(args) > 0 && forgeTexts[args[0]]
}

// outbound hands add every text of a call that leaves the machine, with
// where it is: fields of fetch and web-search tools, request fields of
// other tools, and the arguments of shell programs that send them.
func outbound(c *call, cmds []shell.Command, add func(string, ...[2]*ast.Term)) {
	input := c.input
	var keys []string
	switch fam := c.family; {
	case fam == FamilyFetch, webSearchTools[c.tool], fam == FamilyMCP:
		// Everything a fetch or web-search tool is given goes out with
		// the request, whatever the field is called (Cursor's
		// search_term, Windsurf's Url); and everything an MCP tool is
		// given goes to its server, which may be a remote service.
		if input == nil {
			return
		}
		input.Foreach(func(k, v *ast.Term) {
			ks, _ := k.Value.(ast.String)
			where := [2]*ast.Term{keyField, ast.StringTerm(string(ks))}
			walkText(v.Value, 0, func(s string) { add(s, where) })
		})
		return
	case fam == FamilyOther:
		keys = mcpOutboundKeys
	case fam == FamilyShell:
		for i := range cmds {
			cmd := &cmds[i]
			if !shellSenders[cmd.Name] && !postsText(cmd) {
				continue
			}
			for a, arg := range cmd.Args() {
				if hasURLScheme(arg) {
					continue // a URL's token is the secret-in-url rule's (input.ahp urls)
				}
				add(arg, [2]*ast.Term{keyCommand, ast.InternedTerm(i)}, [2]*ast.Term{keyArg, ast.InternedTerm(a)})
			}
		}
		return
	}
	for _, k := range keys {
		v := field(input, k)
		if v == nil {
			continue
		}
		where := [2]*ast.Term{keyField, ast.StringTerm(k)}
		walkText(v, 0, func(s string) { add(s, where) })
	}
}

// walkText calls f with every string in v (headers and bodies are often
// objects), to a bounded depth.
func walkText(v ast.Value, depth int, f func(string)) {
	if depth > 4 {
		return
	}
	switch x := v.(type) {
	case ast.String:
		f(string(x))
	case ast.Object:
		x.Foreach(func(k, v *ast.Term) {
			if s, ok := k.Value.(ast.String); ok {
				f(string(s))
			}
			walkText(v.Value, depth+1, f)
		})
	case *ast.Array:
		for i := range x.Len() {
			walkText(x.Elem(i).Value, depth+1, f)
		}
	}
}

// hasURLScheme reports whether s starts like an http(s) URL.
func hasURLScheme(s string) bool {
	for _, p := range []string{"http://", "https://", "HTTP://", "HTTPS://"} {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// urlPassword finds the password of a URL's user information:
// https://user:password@host.
var urlPassword = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@"'<>]+:([^/\s@"'<>]+)@[a-z0-9.-]+`)

// namedSecrets finds, in text that leaves the machine, secrets no token
// shape knows: a password written in a URL, and the value of a pair whose
// name says secret (DB_PASSWORD=…, "api_key": "…", --token …), when the
// value is written out (not a $VARIABLE or a template) and looks chosen
// rather than worded. Stand-ins (…EXAMPLE, <password>, xxxxxxxx,
// changeme) are placeholders.
func namedSecrets(text string) []secretscan.Finding {
	var out []secretscan.Finding
	add := func(kind string, start, end int) {
		v := text[start:end]
		if !writtenOut(v) {
			return
		}
		out = append(out, secretscan.Finding{
			Kind: kind, Offset: start, Length: end - start,
			Line: 1 + strings.Count(text[:start], "\n"), Placeholder: standIn(v),
		})
	}
	for _, m := range urlPassword.FindAllStringSubmatchIndex(text, 8) {
		add("url-password", m[2], m[3])
	}
	for _, p := range redact.SecretPairs(text) {
		if len(out) >= 8 {
			break
		}
		if redact.MadeUp(text[p.Start:p.End]) {
			add("named-secret", p.Start, p.End)
		}
	}
	return out
}

// writtenOut reports whether a secret's value is written in the text
// rather than referred to: $VAR, ${VAR}, ${{ secrets.X }}, %s, {{ x }}
// and *** are references or masks.
func writtenOut(v string) bool {
	return len(v) >= 6 && !strings.ContainsAny(v, "$%{}*") && !strings.HasPrefix(v, "[REDACTED")
}

// standIns are values written to be replaced.
var standIns = []string{"changeme", "password", "secret", "your", "example", "placeholder", "redacted", "dummy", "sample", "test", "fake", "demo", "xxx", "hunter2", "foobar", "12345"}

// standIn reports whether a value is a documented or obvious stand-in.
func standIn(v string) bool {
	if secretscan.Placeholder(v) {
		return true
	}
	l := strings.ToLower(v)
	for _, w := range standIns {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
