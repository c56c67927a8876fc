package engine

import (
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/enrich"
)

// CallFacts summarises what one tool call touches, read from its enriched
// input: the raw material of session facts.
type CallFacts struct {
	Family string
	Reads  []string // files the call shows or copies
	Hosts  []string // hosts it contacts
	Secret bool     // one of Reads is a secret (.env, a private key, cloud credentials)
}

// readers are shell programs whose file arguments are read.
var readers = []string{
	"cat", "tac", "less", "more", "head", "tail", "bat", "nl", "grep", "egrep", "fgrep", "rg", "ag",
	"cut", "sort", "uniq", "base64", "xxd", "od", "hexdump", "strings",
	"cp", "scp", "rsync", "tar", "zip", "gzip", "source", ".", "vi", "vim", "nano", "view", "diff",
}

// copiers read every file argument but the last.
var copiers = []string{"cp", "scp", "rsync"}

// DescribeEvent describes a call from its event alone, for when the input
// the policy evaluated lacks the parts (enrich.Describe) that tell.
func DescribeEvent(event ast.Object) CallFacts {
	return DescribeCall(inputWith(event, InputOptions{}, enrich.Describe))
}

// DescribeCall reads what a call touches from input, the value Judge
// evaluated (see Verdict.Input).
func DescribeCall(input ast.Value) CallFacts {
	var c CallFacts
	obj, _ := input.(ast.Object)
	if obj == nil {
		return c
	}
	ahp := field(obj, InputKey)
	tool := field(ahp, "tool")
	c.Family = str(field(tool, "family"))
	if c.Family == "file_read" || c.Family == "search" {
		for _, p := range items(field(tool, "paths")) {
			c.addRead(p)
		}
	}
	for _, u := range items(field(tool, "urls")) {
		c.addHost(str(field(u, "host")))
	}
	for _, cmd := range items(field(field(ahp, "shell"), "commands")) {
		if name := str(field(cmd, "name")); slices.Contains(readers, name) {
			paths := items(field(cmd, "paths"))
			if len(paths) > 1 && slices.Contains(copiers, name) {
				paths = paths[:len(paths)-1] // the destination is written, not read
			}
			for _, p := range paths {
				c.addRead(p)
			}
		}
		for _, r := range items(field(cmd, "redirects")) {
			if op := str(field(r, "op")); op == "<" || op == "<>" {
				c.addRead(field(r, "path"))
			}
		}
		for _, u := range items(field(cmd, "urls")) {
			c.addHost(str(field(u, "host")))
		}
	}
	return c
}

func (c *CallFacts) addRead(p ast.Value) {
	path := str(field(p, "path"))
	if path == "" || slices.Contains(c.Reads, path) {
		return
	}
	c.Reads = append(c.Reads, path)
	if isSecretPath(str(field(p, "base")), str(field(p, "home_rel"))) {
		c.Secret = true
	}
}

func (c *CallFacts) addHost(h string) {
	if h != "" && !slices.Contains(c.Hosts, h) {
		c.Hosts = append(c.Hosts, h)
	}
}

// isSecretPath recognises files whose content is a credential.
func isSecretPath(base, homeRel string) bool {
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env"):
		for _, safe := range []string{"example", "sample", "template", "dist"} {
			if strings.HasSuffix(base, "."+safe) {
				return false
			}
		}
		return true
	case strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub"):
		return true
	case base == ".netrc" || base == ".pgpass" || base == "credentials":
		return true
	}
	return strings.HasPrefix(homeRel, ".ssh/") && !strings.HasSuffix(homeRel, ".pub") ||
		strings.HasPrefix(homeRel, ".aws/")
}

func field(v ast.Value, key string) ast.Value {
	obj, ok := v.(ast.Object)
	if !ok {
		return nil
	}
	t := obj.Get(ast.InternedTerm(key))
	if t == nil {
		return nil
	}
	return t.Value
}

func str(v ast.Value) string {
	s, _ := v.(ast.String)
	return string(s)
}

func items(v ast.Value) []ast.Value {
	arr, ok := v.(*ast.Array)
	if !ok {
		return nil
	}
	out := make([]ast.Value, 0, arr.Len())
	arr.Foreach(func(t *ast.Term) { out = append(out, t.Value) })
	return out
}
