package enrich

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The credential catalogue (data/credentials.json) says where secrets
// live: agents' own logins, cloud and cluster CLIs, registries, keychains,
// password managers, browser profiles, histories. Each path object of
// input.ahp is matched against it once, in Go, so that a rule asks
// p.credential instead of holding its own list, and a new location is one
// line of data.

//go:embed data/credentials.json
var credentialsJSON []byte

// credentialRole is how a catalogued path holds secrets.
type credentialRole uint8

const (
	roleFile credentialRole = iota + 1 // the file is a secret
	roleDir                            // the directory holds secrets; not every file in it is one
	roleTree                           // every file below is a secret
)

// credentialEntry is one catalogued path, split into segments; a segment
// may be a path.Match pattern (one segment).
type credentialEntry struct {
	kind string
	home bool // relative to a home directory (~/…)
	segs []string
	role credentialRole
}

// credentialCatalogue indexes the entries by their first segment, which
// is never a pattern, so a path is compared with a handful of entries.
type credentialCatalogue struct {
	byFirst map[string][]credentialEntry // home-relative entries
	abs     map[string][]credentialEntry // absolute entries, by first segment after /
}

// CredentialLocation is a row of the catalogue, for documentation and
// tests.
type CredentialLocation struct {
	Kind  string   `json:"kind"`
	What  string   `json:"what"`
	Files []string `json:"files"`
	Dirs  []string `json:"dirs"`
	Trees []string `json:"trees"`
}

// CredentialLocations returns the rows of the built-in catalogue.
func CredentialLocations() []CredentialLocation { return credentialRows }

var credentialRows, credentials = mustCredentials(credentialsJSON)

func mustCredentials(data []byte) ([]CredentialLocation, *credentialCatalogue) {
	rows, c, err := parseCredentials(data)
	if err != nil {
		panic(fmt.Sprintf("enrich: built-in credential catalogue: %v", err))
	}
	return rows, c
}

// parseCredentials reads a catalogue: {"locations": [CredentialLocation…]}.
func parseCredentials(data []byte) ([]CredentialLocation, *credentialCatalogue, error) {
	var doc struct {
		Locations []CredentialLocation `json:"locations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("decoding: %w", err)
	}
	c := &credentialCatalogue{byFirst: map[string][]credentialEntry{}, abs: map[string][]credentialEntry{}}
	for _, l := range doc.Locations {
		if l.Kind == "" {
			return nil, nil, fmt.Errorf("a location has no kind")
		}
		for _, set := range []struct {
			paths []string
			role  credentialRole
		}{{l.Files, roleFile}, {l.Dirs, roleDir}, {l.Trees, roleTree}} {
			for _, p := range set.paths {
				e, err := newCredentialEntry(l.Kind, p, set.role)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", l.Kind, err)
				}
				if e.home {
					c.byFirst[e.segs[0]] = append(c.byFirst[e.segs[0]], e)
				} else {
					c.abs[e.segs[0]] = append(c.abs[e.segs[0]], e)
				}
			}
		}
	}
	return doc.Locations, c, nil
}

func newCredentialEntry(kind, p string, role credentialRole) (credentialEntry, error) {
	e := credentialEntry{kind: kind, role: role}
	switch {
	case strings.HasPrefix(p, "~/"):
		e.home, p = true, p[2:]
	case strings.HasPrefix(p, "/"):
		p = p[1:]
	default:
		return e, fmt.Errorf("path %q is neither ~/… nor absolute", p)
	}
	if p == "" || path.Clean(p) != p {
		return e, fmt.Errorf("path %q is not clean", p)
	}
	e.segs = strings.Split(p, "/")
	if strings.ContainsAny(e.segs[0], "*?[") {
		return e, fmt.Errorf("path %q starts with a pattern", p)
	}
	for _, s := range e.segs {
		if _, err := path.Match(s, ""); err != nil {
			return e, fmt.Errorf("path %q: %w", p, err)
		}
	}
	return e, nil
}

// credentialMatch is what the catalogue says of one path.
type credentialMatch struct {
	// kind is set when the path is a secret file, or lies in a tree.
	kind string
	// dirKind is set when the path is a catalogued directory or tree, or
	// a directory within a tree: reading it whole exposes secrets.
	dirKind string
	// holds is set when the path is a directory above a catalogued
	// location (a home, ~/.config, /etc, /): a recursive read or search
	// of it sweeps them up.
	holds bool
}

// match judges a path: segs are its segments below a home (home true) or
// below /. A path that is itself a glob is judged by stem, its segments
// before the first pattern, and last, its final pattern: ~/.aws/* is the
// directory ~/.aws read whole; ~/**/*.json sweeps everything .json below
// the home; ~/**/*.go reaches no secret file.
func (c *credentialCatalogue) match(home bool, segs []string) credentialMatch {
	var m credentialMatch
	segs = expansionsAsGlobs(segs)
	stem, glob := segs, false
	for i, s := range segs {
		if strings.ContainsAny(s, "*?[{") {
			stem, glob = segs[:i], true
			break
		}
	}
	last := ""
	if glob {
		last = segs[len(segs)-1]
	}
	if len(stem) == 0 {
		// A home itself, or /: everything is below.
		m.holds = !glob || lastReachesSecret(last)
		return m
	}
	entries := c.abs[stem[0]]
	if home {
		entries = c.byFirst[stem[0]]
	}
	for i := range entries {
		e := &entries[i]
		n := min(len(stem), len(e.segs))
		if !segsMatch(e.segs[:n], stem[:n]) {
			continue
		}
		switch {
		case len(stem) < len(e.segs):
			// Above the location: a sweep reaches it.
			if !glob || lastReachesSecret(last) {
				m.holds = true
			}
		case len(stem) == len(e.segs):
			if !glob && e.role == roleFile {
				m.kind = e.kind
			}
			if e.role == roleDir || e.role == roleTree {
				// The directory itself, or all of it (~/.aws/*); a
				// narrower glob (~/.ssh/id*) is judged by what it names.
				if !glob || isGlobAll(last) {
					m.dirKind = e.kind
				}
				if e.role == roleTree && glob {
					m.kind = e.kind
				}
			}
		default: // below the location
			if e.role == roleTree {
				// A file or a directory of secrets: either way, secret.
				m.kind, m.dirKind = e.kind, e.kind
			}
		}
	}
	return m
}

// expansionsAsGlobs reads an expansion left unknown in a segment
// (~/.ssh/$f, ~/.aws/${name}) as the pattern * it may stand for: a loop
// over a credential directory names every file in it. segs is copied
// only when it holds one.
func expansionsAsGlobs(segs []string) []string {
	out := segs
	for i, s := range segs {
		if !strings.Contains(s, "$") {
			continue
		}
		if &out[0] == &segs[0] {
			out = slices.Clone(segs)
		}
		out[i] = unknownExpansion.ReplaceAllString(s, "*")
	}
	return out
}

var unknownExpansion = regexp.MustCompile(`\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?])`)

// segsMatch reports whether each pattern segment matches its path segment.
func segsMatch(patterns, segs []string) bool {
	for i, p := range patterns {
		if p == segs[i] {
			continue
		}
		if ok, _ := path.Match(p, segs[i]); !ok {
			return false
		}
	}
	return true
}

// secretBaseExamples are names of secret files, to judge whether a glob's
// last segment can match one: *.json can (auth.json), *.go cannot.
var secretBaseExamples = []string{
	"credentials", ".credentials.json", "auth.json", "config.json", "config", "hosts.yml",
	"id_rsa", "id_ed25519", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass",
	"credentials.toml", "credentials.db", "access_tokens.db", "oauth_creds.json",
	"secring.gpg", "login.keychain-db", "Cookies", "Login Data", "cookies.sqlite",
	"logins.json", "key4.db", ".bash_history", ".zsh_history", "settings.xml",
	"gradle.properties", "NuGet.Config", "privkey.pem", "server.key", "token", ".vault-token",
	"kaggle.json", "msal_token_cache.json", "config.yaml", "config.yml", "shadow", "environ",
}

// lastReachesSecret reports whether the last segment of a glob can name a
// secret file.
func lastReachesSecret(last string) bool {
	if last == "" || isGlobAll(last) {
		return true
	}
	for _, b := range secretBaseExamples {
		if ok, _ := path.Match(last, b); ok {
			return true
		}
	}
	return false
}

// credentialOf judges a resolved path against the built-in catalogue.
func credentialOf(pi *pathInfo) credentialMatch {
	switch {
	case pi.inHome:
		if pi.homeRel == "" {
			return credentialMatch{holds: true}
		}
		// Most paths under a home are in no catalogued directory: their
		// first name settles it without splitting the path.
		if first, _, _ := strings.Cut(pi.homeRel, "/"); len(credentials.byFirst[first]) == 0 && !strings.ContainsAny(first, "*?[{") {
			return credentialMatch{}
		}
		return credentials.match(true, strings.Split(pi.homeRel, "/"))
	case pi.abs == "/" || pi.root:
		return credentialMatch{holds: true}
	case strings.HasPrefix(pi.abs, "/"):
		m := credentials.match(false, strings.Split(pi.abs[1:], "/"))
		if !m.holds {
			// The parents of home directories hold every home's secrets.
			switch pi.abs {
			case "/home", "/Users", "C:/Users":
				m.holds = true
			}
		}
		return m
	case strings.HasPrefix(pi.abs, "C:/Users"):
		return credentialMatch{holds: pi.abs == "C:/Users"}
	}
	return credentialMatch{}
}
