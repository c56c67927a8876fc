package effects

import (
	"strings"
	"unicode"
)

// KnownTool reports whether the table has rows for a tool name.
func (m *Matcher) KnownTool(name string) bool {
	if m == nil {
		return false
	}
	_, ok := m.tools[strings.ToLower(name)]
	return ok
}

// maxToolWords bounds the words of a tool name that are looked at.
const maxToolWords = 6

// ToolVerbs appends the effects that the words of a tool's name speak,
// for an MCP tool the table has no row for: drop_collection, deploy-site,
// publishPackage reach the same verbs as an unknown CLI's subcommands
// (the table's verbs, with their confidence). A name with a read word
// (list_deployments, get_release, rollout_status) only looks.
func (m *Matcher) ToolVerbs(name string, out []Effect) []Effect {
	if m == nil || len(m.verbs) == 0 {
		return out
	}
	words := nameWords(name)
	for _, w := range words {
		if readWords[w] {
			return out
		}
	}
	for _, w := range words {
		v, ok := m.verbs[w]
		if !ok {
			continue
		}
		e := Effect{
			Effect: v.Effect, Target: cmpOr(v.Target, name), Program: name, Command: -1,
			Source:     Source{Kind: "tool-verb", Row: name, Verb: w},
			Confidence: v.Confidence, Approvable: v.Approvable,
		}
		if e.Effect == StoreDestroy && e.Confidence == Low {
			// delete_issue is everyday; delete_database is not: a weak
			// destroying verb on a store's own noun is a strong one.
			for _, n := range words {
				if storeNouns[n] {
					e.Confidence, e.Target = Medium, n
					break
				}
			}
		}
		return append(out, e)
	}
	return out
}

// storeNouns are the words of a tool's name that name a store of data or
// a whole deployment, whose deletion cannot be undone from here.
var storeNouns = map[string]bool{
	"database": true, "databases": true, "db": true, "table": true, "tables": true, "collection": true,
	"collections": true, "bucket": true, "buckets": true, "cluster": true, "instance": true, "instances": true,
	"stack": true, "project": true, "repository": true, "repo": true, "namespace": true, "volume": true,
	"volumes": true, "environment": true, "app": true, "application": true, "zone": true, "index": true,
	"schema": true, "keyspace": true, "topic": true, "queue": true, "vault": true, "vpc": true,
	"snapshot": true, "backup": true, "backups": true, "service": true, "function": true,
	"deployment": true, "site": true, "account": true, "organization": true, "workspace": true,
	"dataset": true, "warehouse": true, "keys": true, "documents": true, "records": true, "rows": true,
}

// nameWords splits a tool name into lower-case words at _, -, ., spaces
// and case changes: drop_collection, drop-collection and dropCollection
// are drop and collection.
func nameWords(name string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 && len(words) < maxToolWords {
			words = append(words, b.String())
		}
		b.Reset()
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' || r == ':':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			prevLower = false
		default:
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		}
		b.WriteRune(unicode.ToLower(r))
	}
	flush()
	return words
}

// ToolNames lists the tool names the table has rows for, lower-cased.
func (m *Matcher) ToolNames() []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m.tools))
	for n := range m.tools {
		out = append(out, n)
	}
	return out
}
