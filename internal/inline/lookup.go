package inline

import (
	"regexp"
	"strings"
)

// Lookups that reach a function by a name built at run time:
// getattr(__import__('os'), 'sys'+'tem')('id') is os.system('id'), and
// require('child_'+'process') is child_process. Where the pieces are
// literals they are folded back into the plain call, so the rest of the
// scan sees it; where they are not, the program is marked as making a
// dynamic lookup, which no reading of the code can follow.

var (
	// 'a' + 'b', "a" + "b": literal concatenation (no escapes inside).
	literalConcat = regexp.MustCompile(`'([^'\\\n]*)'\s*\+\s*'([^'\\\n]*)'|"([^"\\\n]*)"\s*\+\s*"([^"\\\n]*)"`)

	pyImport       = regexp.MustCompile(`\b(?:__import__|importlib\.import_module|import_module)\(\s*['"]([\w.]+)['"]\s*\)`)
	pyGetattr      = regexp.MustCompile(`\bgetattr\(\s*([\w.]+)\s*,\s*['"](\w+)['"]\s*\)`)
	pyBuiltinsDict = regexp.MustCompile(`\b(?:globals\(\)|locals\(\)|vars\(\))\[\s*['"]__builtins__['"]\s*\]`)
	pyBuiltinAttr  = regexp.MustCompile(`\b(?:__builtins__|builtins)(?:\.__dict__)?(?:\.(\w+)|\[\s*['"](\w+)['"]\s*\])`)
	pyGlobalsItem  = regexp.MustCompile(`\b(?:globals\(\)|locals\(\)|vars\(\))\[\s*['"](\w+)['"]\s*\]`)
	pyDynamic      = regexp.MustCompile(`\b(?:__import__|import_module)\(\s*[^'"\s)]|\bgetattr\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*[^'"\s]|\b(?:globals|locals|vars)\(\)\s*\[\s*[^'"\s]|__builtins__(?:\.__dict__)?\s*\[\s*[^'"\s]`)

	// for f in glob.glob('/x/*'), [… for f in Path('/x').rglob('*')]: the
	// loop variable stands for the pattern.
	pyGlobLoop = regexp.MustCompile(`\bfor\s+(\w+)\s+in\s+(?:(?:glob\.)?i?glob\(\s*['"]([^'"]{1,256})['"]|(?:pathlib\.)?Path\(\s*['"]([^'"]{1,256})['"]\s*\)\.(?:r?glob\(\s*['"]([^'"]{1,64})['"]|iterdir\(\s*))`)

	jsRequire   = regexp.MustCompile(`\brequire\(\s*['"]([\w:/.-]+)['"]\s*\)\[\s*['"](\w+)['"]\s*\]`)
	jsGlobal    = regexp.MustCompile(`\b(?:global|globalThis|window|this)\[\s*['"](\w+)['"]\s*\]`)
	jsDynamic   = regexp.MustCompile(`\brequire\(\s*[^'"\s)]|\b(?:global|globalThis|process\.mainModule)\s*\[\s*[^'"\s]`)
	maxFoldings = 64
	// maxBoundDeletes bounds the delete sites rewritten per glob loop.
	maxBoundDeletes = 16
)

// unfold rewrites the dynamic lookups of code whose pieces are literals
// into plain calls, and reports whether a lookup by a computed name is
// left.
func unfold(lang, code string) (string, bool) {
	switch lang {
	case "python", "javascript":
	default:
		return code, false
	}
	// Most code holds none of the forms: a few substring tests keep the
	// regular expressions off it.
	if concatenates(code) {
		for range maxFoldings {
			next := literalConcat.ReplaceAllStringFunc(code, func(m string) string {
				p := literalConcat.FindStringSubmatch(m)
				if strings.HasPrefix(m, "'") {
					return "'" + p[1] + p[2] + "'"
				}
				return `"` + p[3] + p[4] + `"`
			})
			if next == code {
				break
			}
			code = next
		}
	}
	if lang == "javascript" {
		if !strings.Contains(code, "require") && !strings.Contains(code, "global") && !strings.Contains(code, "window") && !strings.Contains(code, "this[") {
			return code, false
		}
		code = jsRequire.ReplaceAllString(code, "require('$1').$2")
		code = jsGlobal.ReplaceAllString(code, "$1")
		return code, jsDynamic.MatchString(code)
	}
	if strings.Contains(code, "glob") || strings.Contains(code, "iterdir") {
		code = bindGlobLoops(code)
	}
	if !strings.Contains(code, "__import__") && !strings.Contains(code, "import_module") && !strings.Contains(code, "getattr") && !strings.Contains(code, "builtins") &&
		!strings.Contains(code, "globals()") && !strings.Contains(code, "locals()") && !strings.Contains(code, "vars()") {
		return code, false
	}
	for range maxFoldings {
		next := pyImport.ReplaceAllString(code, "$1")
		next = pyBuiltinsDict.ReplaceAllString(next, "__builtins__")
		next = pyBuiltinAttr.ReplaceAllString(next, "$1$2")
		next = pyGlobalsItem.ReplaceAllString(next, "$1")
		next = pyGetattr.ReplaceAllString(next, "$1.$2")
		if next == code {
			break
		}
		code = next
	}
	return code, pyDynamic.MatchString(code)
}

// concatenates reports whether code may join two string literals with +.
func concatenates(code string) bool {
	for i := strings.IndexByte(code, '+'); i >= 0; {
		before := strings.TrimRight(code[:i], " \t")
		after := strings.TrimLeft(code[i+1:], " \t")
		if before != "" && after != "" && (before[len(before)-1] == '\'' || before[len(before)-1] == '"') && (after[0] == '\'' || after[0] == '"') {
			return true
		}
		j := strings.IndexByte(code[i+1:], '+')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// bindGlobLoops replaces the variable of a loop over a literal glob, where
// it is passed to a delete, with the pattern: os.remove(f) for f in
// glob.glob('/home/u/*') deletes /home/u/*.
func bindGlobLoops(code string) string {
	for _, m := range pyGlobLoop.FindAllStringSubmatch(code, 8) {
		v, pattern := m[1], m[2]
		if pattern == "" {
			dir, sub := m[3], m[4]
			switch {
			case sub == "":
				sub = "*"
			case strings.HasPrefix(sub, "**"):
				sub = "**/*"
			}
			pattern = strings.TrimSuffix(dir, "/") + "/" + sub
		}
		lit := "'" + pattern + "'"
		// Bounded, so that many deletes of a long pattern cannot grow
		// the code past what one replacement per delete site costs.
		left := maxBoundDeletes
		del := regexp.MustCompile(`\b(os\.remove|os\.unlink|os\.rmdir|shutil\.rmtree|rmtree|os\.removedirs)\(\s*` + regexp.QuoteMeta(v) + `\s*[,)]`)
		code = del.ReplaceAllStringFunc(code, func(s string) string {
			if left--; left < 0 {
				return s
			}
			return s[:strings.Index(s, "(")+1] + lit + s[len(s)-1:]
		})
		meth := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\.(unlink|rmdir)\(`)
		code = meth.ReplaceAllStringFunc(code, func(s string) string {
			if left--; left < 0 {
				return s
			}
			return "Path(" + lit + ")." + s[len(v)+1:]
		})
	}
	return code
}
