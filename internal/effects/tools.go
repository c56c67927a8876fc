package effects

import (
	"slices"
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
	w, v, ok := m.nameVerb(words)
	if !ok {
		return out
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

// nameVerb finds the verb the words of a compound name speak
// (create_github_release, build-promote, deploySite): the first that is
// one of the table's verbs, none when a word says the name only looks
// (list_deployments, release-notes). A word that also names a build
// variant (zstd-release, build-release: the optimised build) speaks
// only first in the name or after a verb that makes the thing
// (create_release, cut-release); elsewhere it is recorded at low
// confidence.
func (m *Matcher) nameVerb(words []string) (string, Verb, bool) {
	for _, w := range words {
		if readWords[w] {
			return "", Verb{}, false
		}
	}
	for k, w := range words {
		v, ok := m.verbs[w]
		if !ok {
			continue
		}
		if variantWords[w] && k > 0 && !slices.ContainsFunc(words[:k], func(x string) bool { return makerWords[x] }) {
			v.Confidence = Low
		}
		return w, v, true
	}
	return "", Verb{}, false
}

// variantWords are verbs that also name a build variant.
var variantWords = map[string]bool{"release": true}

// makerWords are verbs that make, change or send the thing named after
// them: create_release is a release made, zstd-release a build.
var makerWords = map[string]bool{
	"create": true, "cut": true, "do": true, "new": true, "draft": true, "tag": true, "publish": true,
	"push": true, "upload": true, "update": true, "edit": true, "trigger": true, "start": true, "submit": true,
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
