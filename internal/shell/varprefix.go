package shell

import (
	"regexp"
	"strings"
)

// ViaVariable marks the command that follows a program word made of one
// unknown variable, read as if the variable were empty: $SUDO rm -rf /x,
// xargs $guard gh release create, ${DRY_RUN} git push --force. Such a
// prefix is usually a wrapper switched on or off by the environment, so
// what follows it is what runs when it is off.
const ViaVariable = "variable-prefix"

// loneVariable matches a word that is one variable reference and nothing
// else: $X, ${X}, and Make's $(X), which the analysis reads as ${X}.
var loneVariable = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)

// toolVariables are the variables whose value is, by convention, the path
// of the program they are named after: Make sets $(MAKE) itself, and
// Makefiles name their tools $(GO), $(DOCKER), $(KUBECTL). Variables that
// are often empty ($(SUDO), $(Q)) are not here: they are prefixes.
var toolVariables = map[string]string{
	"MAKE": "make", "GMAKE": "gmake", "GIT": "git", "DOCKER": "docker", "PODMAN": "podman",
	"KUBECTL": "kubectl", "HELM": "helm", "KUSTOMIZE": "kustomize", "TERRAFORM": "terraform",
	"TOFU": "tofu", "GO": "go", "CARGO": "cargo", "NPM": "npm", "PNPM": "pnpm", "YARN": "yarn",
	"GH": "gh", "AWS": "aws", "GCLOUD": "gcloud", "GSUTIL": "gsutil", "AZ": "az",
}

// toolVariable returns the program a first word names when it is one
// variable named after a tool ($(MAKE), ${KUBECTL}, $DOCKER_BIN): its
// value is unknown here but, by convention, that program.
func toolVariable(f field) (field, bool) {
	if !f.dynamic || f.subst {
		return f, false
	}
	m := loneVariable.FindStringSubmatch(f.text)
	if m == nil {
		return f, false
	}
	name := m[1]
	for _, suffix := range []string{"_BIN", "_CMD", "_EXE"} {
		name = strings.TrimSuffix(name, suffix)
	}
	if p, ok := toolVariables[name]; ok {
		return field{text: p}, true
	}
	return f, false
}

// variablePrefix analyses, as a command of its own, the words after a
// program word that is one unknown variable, when they read as a command
// (a program name, not an option or an assignment). The command as
// written stays too: the variable may hold a program.
func (a *analyzer) variablePrefix(idx int, words []field, sc scope) {
	// ${SUDO:-} and ${X-} read as an unknown, empty text.
	if len(words) < 2 || !words[0].dynamic || words[0].subst || words[0].text != "" && !loneVariable.MatchString(words[0].text) {
		return
	}
	next := words[1]
	if _, ok := toolVariable(next); !ok && (next.dynamic || next.text == "" || strings.HasPrefix(next.text, "-") || isAssignment(next.text)) {
		return
	}
	var b strings.Builder
	for i, w := range words[1:] {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.dynamic {
			b.WriteString(w.text) // as written: $x stays an expansion
		} else {
			b.WriteString(shellQuote(w.text))
		}
	}
	a.script(b.String(), sc.nested(ViaVariable, idx), false)
}
