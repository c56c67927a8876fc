package enrich

import (
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/ahp-opa/ahp-opa/internal/shell"
	"github.com/ahp-opa/ahp-opa/transport"
)

// CallFacts summarises what one tool call touches, read from its enriched
// input: the raw material of session facts.
type CallFacts struct {
	Family string
	Reads  []string // files the call shows or copies
	Hosts  []string // hosts it contacts
	Secret bool     // one of Reads is a secret (.env, a private key, cloud credentials)
	// Writes are the files the call writes: a file tool's, a shell
	// redirect's, a copy's destination. A definition the session wrote is
	// the agent's text when a later command runs it.
	Writes []string
}

// readers are shell programs whose file arguments are read.
var readers = []string{
	"cat", "tac", "less", "more", "head", "tail", "bat", "nl", "grep", "egrep", "fgrep", "rg", "ag",
	"cut", "sort", "uniq", "base64", "xxd", "od", "hexdump", "strings",
	"cp", "scp", "rsync", "tar", "zip", "gzip", "source", ".", "vi", "vim", "nano", "view", "diff",
}

// writers write their last file argument: copies, moves, links.
var writers = []string{"cp", "mv", "install", "ln", "rsync", "scp"}

// copiers read every file argument but the last.
var copiers = []string{"cp", "scp", "rsync"}

// DescribeEvent describes a call from its event alone, for when the input
// the policy evaluated lacks the parts (Describe) that tell.
func DescribeEvent(ev *transport.Event) CallFacts {
	return describe(Enrich(ev, Options{}, Describe).Object)
}

// DescribeCall reads what a call touches from input, the policy input
// the engine evaluated.
func DescribeCall(input ast.Value) CallFacts {
	obj, _ := input.(ast.Object)
	return describe(object(obj, InputKey))
}

// describe reads what a call touches from input.ahp.
func describe(ahp ast.Object) CallFacts {
	var c CallFacts
	if ahp == nil {
		return c
	}
	tool := object(ahp, "tool")
	c.Family, _ = text(tool, "family")
	switch c.Family {
	case FamilyFileRead, FamilySearch:
		for _, p := range elems(tool, "paths") {
			c.addRead(p.Value)
		}
	case FamilyFileWrite, FamilyFileEdit:
		for _, p := range elems(tool, "paths") {
			c.addWrite(p.Value)
		}
	}
	for _, u := range elems(tool, "urls") {
		c.addHost(u.Value)
	}
	cmds := elems(object(ahp, "shell"), "commands")
	later := make([]bool, len(cmds))
	for i, cmd := range cmds {
		cmd, _ := cmd.Value.(ast.Object)
		// A command of text written to run later does not run now: it
		// reads and contacts nothing in this session.
		via, _ := text(cmd, "via")
		parent, _ := field(cmd, "parent").(ast.Number)
		pi, _ := parent.Int()
		if later[i] = via == shell.ViaLater || pi >= 0 && pi < i && later[pi]; later[i] {
			continue
		}
		name, _ := text(cmd, "name")
		if slices.Contains(readers, name) {
			paths := elems(cmd, "paths")
			if len(paths) > 1 && slices.Contains(copiers, name) {
				paths = paths[:len(paths)-1] // the destination is written, not read
			}
			for _, p := range paths {
				c.addRead(p.Value)
			}
		}
		if paths := elems(cmd, "paths"); len(paths) > 1 && slices.Contains(writers, name) {
			c.addWrite(paths[len(paths)-1].Value)
		} else if name == "tee" {
			for _, p := range paths {
				c.addWrite(p.Value)
			}
		}
		for _, r := range elems(cmd, "redirects") {
			r, _ := r.Value.(ast.Object)
			switch op, _ := text(r, "op"); op {
			case "<":
				c.addRead(field(r, "path"))
			case "<>":
				c.addRead(field(r, "path"))
				c.addWrite(field(r, "path"))
			case ">", ">>", ">|", "&>", "&>>":
				c.addWrite(field(r, "path"))
			}
		}
		for _, u := range elems(cmd, "urls") {
			c.addHost(u.Value)
		}
	}
	return c
}

func (c *CallFacts) addRead(v ast.Value) {
	p, _ := v.(ast.Object)
	path, _ := text(p, "path")
	if path == "" || slices.Contains(c.Reads, path) {
		return
	}
	c.Reads = append(c.Reads, path)
	base, _ := text(p, "base")
	homeRel, _ := text(p, "home_rel")
	if isSecretPath(base, homeRel) {
		c.Secret = true
	}
}

func (c *CallFacts) addWrite(v ast.Value) {
	p, _ := v.(ast.Object)
	path, _ := text(p, "path")
	if path != "" && !slices.Contains(c.Writes, path) {
		c.Writes = append(c.Writes, path)
	}
}

func (c *CallFacts) addHost(v ast.Value) {
	u, _ := v.(ast.Object)
	h, _ := text(u, "host")
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
