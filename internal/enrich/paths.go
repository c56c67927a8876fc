package enrich

import (
	"path"
	"strings"
)

// pathContext resolves the paths a tool call names against the session:
// its working directory, its workspace roots and the user's home.
type pathContext struct {
	cwd   string   // absolute and clean, or ""
	roots []string // absolute and clean; the cwd when the session names none
	home  string   // absolute and clean, or "" when unknown
}

func newPathContext(cwd string, roots []string, home string) *pathContext {
	pc := &pathContext{home: cleanAbs(home)}
	pc.cwd = cleanAbs(pc.expandHome(cwd))
	for _, r := range roots {
		if r = cleanAbs(pc.expandHome(r)); r != "" {
			pc.roots = append(pc.roots, r)
		}
	}
	if len(pc.roots) == 0 && pc.cwd != "" {
		pc.roots = []string{pc.cwd}
	}
	return pc
}

// cleanAbs cleans an absolute path; anything else gives "".
func cleanAbs(p string) string {
	p = slashes(p)
	if !isAbs(p) {
		return ""
	}
	return cleanPath(p)
}

// slashes turns a Windows path (C:\Users\x) into C:/Users/x.
func slashes(p string) string {
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return strings.ReplaceAll(p, `\`, "/")
	}
	return p
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || (len(p) >= 3 && p[1] == ':' && isLetter(p[0]) && p[2] == '/')
}

func cleanPath(p string) string {
	if len(p) >= 3 && p[1] == ':' && isLetter(p[0]) {
		return p[:2] + path.Clean(p[2:])
	}
	return path.Clean(p)
}

// expandHome replaces a leading ~, ~user, $HOME or ${HOME}. With the home
// unknown, ~ stays and the path is kept relative to it.
func (pc *pathContext) expandHome(p string) string {
	var rest string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		rest = p[1:]
	case strings.HasPrefix(p, "$HOME") && (len(p) == 5 || p[5] == '/'):
		rest = p[5:]
	case strings.HasPrefix(p, "${HOME}"):
		rest = p[7:]
	case strings.HasPrefix(p, "~"):
		user, after, _ := strings.Cut(p[1:], "/")
		if user == "" || strings.ContainsAny(user, "$*?[") {
			return p
		}
		base := "/home"
		if pc.home != "" {
			base = path.Dir(pc.home)
		}
		if user == "root" {
			return "/root/" + after
		}
		return base + "/" + user + "/" + after
	default:
		return p
	}
	if pc.home == "" {
		return "~" + rest
	}
	return pc.home + rest
}

// workdirPrefixes name the directory a command runs in: "$PWD/Info"
// is the same file as "./Info".
var workdirPrefixes = []string{"$PWD", "${PWD}", "$(pwd)", "`pwd`"}

// expandWorkdir replaces a leading $PWD (or $(pwd)) with dir, the
// directory the command runs in; with dir unknown the path stays as
// written, and so dynamic.
func expandWorkdir(p, dir string) string {
	if dir == "" || !strings.HasPrefix(p, "$") && !strings.HasPrefix(p, "`") {
		return p
	}
	for _, w := range workdirPrefixes {
		if rest, ok := strings.CutPrefix(p, w); ok && (rest == "" || rest[0] == '/') {
			return dir + rest
		}
	}
	return p
}

// pathInfo is what policies learn about one path.
type pathInfo struct {
	raw, abs, base, homeRel string
	inHome                  bool // homeRel is set
	inside, outside         bool // relative to the workspace roots
	root, home              bool // the file system root or a home directory (or all of its entries)
	glob, dynamic           bool
}

// resolve canonicalises a path as written in a tool call.
func (pc *pathContext) resolve(raw string) pathInfo { return pc.resolveIn(raw, pc.cwd) }

// resolveIn canonicalises a path relative to dir, an absolute directory
// or "" when unknown.
func (pc *pathContext) resolveIn(raw, dir string) pathInfo {
	pi := pathInfo{raw: raw}
	p := slashes(pc.expandHome(expandWorkdir(raw, dir)))
	if !isAbs(p) && !strings.HasPrefix(p, "~") && dir != "" {
		p = dir + "/" + p
	}
	p = cleanPath(p)
	pi.abs = p
	pi.base = path.Base(p)
	pi.glob = strings.ContainsAny(raw, "*?[")
	pi.dynamic = strings.ContainsAny(p, "$`")

	// "/*" and "~/.*" name every entry of / and ~: as bad as the directory.
	whole := p
	if isGlobAll(pi.base) {
		whole = cleanPath(path.Dir(p))
	}
	pi.root = whole == "/" || (len(whole) == 3 && whole[1] == ':' && whole[2] == '/')
	pi.homeRel, pi.inHome = homeRelative(p, pc.home)
	if _, ok := homeRelative(whole, pc.home); ok {
		rel, _ := homeRelative(whole, pc.home)
		pi.home = rel == ""
	}
	if isAbs(p) && len(pc.roots) > 0 && !strings.HasPrefix(p, "~") {
		for _, r := range pc.roots {
			if within(p, r) {
				pi.inside = true
				break
			}
		}
		pi.outside = !pi.inside
	} else if strings.HasPrefix(p, "~") && len(pc.roots) > 0 {
		// Home unknown: a ~ path is inside only if a root is too, which
		// cannot be told; call it outside, the safe side.
		pi.outside = true
	}
	return pi
}

func isGlobAll(base string) bool {
	switch base {
	case "*", ".*", "**", "*.*", ".[!.]*", "{*,.*}", "{.*,*}":
		return true
	}
	return false
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// homeRelative returns p relative to a home directory: the user's, or any
// that looks like one (/home/u, /Users/u, /root, C:/Users/u, ~).
func homeRelative(p, home string) (string, bool) {
	if home != "" && within(p, home) {
		return strings.TrimPrefix(strings.TrimPrefix(p, home), "/"), true
	}
	if p == "~" {
		return "", true
	}
	if strings.HasPrefix(p, "~/") {
		return p[2:], true
	}
	if p == "/root" {
		return "", true
	}
	if strings.HasPrefix(p, "/root/") {
		return p[6:], true
	}
	rest := ""
	switch {
	case strings.HasPrefix(p, "/home/"):
		rest = p[6:]
	case strings.HasPrefix(p, "/Users/"):
		rest = p[7:]
	case len(p) > 9 && p[1] == ':' && strings.EqualFold(p[2:9], "/Users/"):
		rest = p[9:]
	default:
		return "", false
	}
	user, after, _ := strings.Cut(rest, "/")
	if user == "" || user == "Shared" || isGlobAll(user) {
		return "", false
	}
	return after, true
}

// secretKeySuffixes are the extensions paths.private_key looks at.
var secretKeySuffixes = []string{".key", ".kdbx", ".p12", ".pfx", ".ppk", ".jks", ".keystore", ".p8", ".pem"}

// sensitive reports whether a path may name a secret: what the library's
// paths.ssh_private_key, paths.env_file and paths.credential_file could
// match, and more (anything under a dot directory of a home, /etc, /proc,
// .ssh, a name containing .env, a key file). Rules about reading secrets
// start with input.ahp.sensitive, which OPA's rule index turns into a skip
// for calls that name no such path. It must stay a superset of those
// predicates: a false negative would hide a secret read.
func (pi *pathInfo) sensitive() bool {
	p, base := pi.abs, pi.base
	if strings.Contains(p, ".ssh/") || strings.Contains(base, ".env") || strings.HasPrefix(base, "id_") {
		return true
	}
	if pi.inHome && (strings.HasPrefix(pi.homeRel, ".") || strings.HasPrefix(pi.homeRel, "_netrc")) {
		return true
	}
	if otherHomeDotEntry(p) {
		return true
	}
	for _, dir := range []string{"/proc/", "/etc/", "/var/run/", "/run/"} {
		if strings.HasPrefix(p, dir) {
			return true
		}
	}
	lb := strings.ToLower(base)
	for _, s := range secretKeySuffixes {
		if strings.HasSuffix(lb, s) {
			return true
		}
	}
	return false
}

// otherHomeDotEntry reports whether p is a dot entry of any home directory
// (/root/.ssh, /home/alice/.aws/…), where credential directories live.
func otherHomeDotEntry(p string) bool {
	var rest string
	switch {
	case strings.HasPrefix(p, "/root/"):
		rest = p[len("/root/"):]
	case strings.HasPrefix(p, "/home/"), strings.HasPrefix(p, "/Users/"):
		_, after, _ := strings.Cut(p[1:], "/")
		_, rest, _ = strings.Cut(after, "/")
	default:
		return false
	}
	return strings.HasPrefix(rest, ".")
}
