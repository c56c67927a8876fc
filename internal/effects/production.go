package effects

import (
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// A production target written in a way no row knows: a host, a
// connection string, a context, profile or environment named for
// production, next to an act that changes or destroys. Whatever the
// program, such an act is not a low-confidence guess.

// prodWords are the words of a name that say production.
var prodWords = map[string]bool{"prod": true, "production": true, "prd": true, "live": true}

// targetOptions are options whose value names where a call acts, across
// CLIs: a context, profile, environment, stage, cluster or project.
var targetOptions = map[string]bool{
	"--context": true, "--kube-context": true, "--profile": true, "--env": true, "--environment": true,
	"-e": true, "--stage": true, "--cluster": true, "--project": true, "--namespace": true, "-n": true,
	"--app": true, "-a": true, "--target": true, "--workspace": true,
}

// targetEnv are environment variables whose value names the environment
// a program runs against.
var targetEnv = map[string]bool{
	"RAILS_ENV": true, "RACK_ENV": true, "NODE_ENV": true, "APP_ENV": true, "MIX_ENV": true,
	"DJANGO_SETTINGS_MODULE": true, "ENVIRONMENT": true, "ENV": true, "STAGE": true,
	"AWS_PROFILE": true, "KUBECONTEXT": true,
}

// Production returns the word of c that names a production target, ""
// for none: a host or URL with a production label (cache.prod.internal,
// db-prd-1.acme.io), a target option's value (--context prod-eu,
// --profile production), a target variable set to one (RAILS_ENV=
// production), or a variable named for one ($PROD_DATABASE_URL).
func Production(c *shell.Command) string {
	args := c.Args()
	for j, a := range args {
		if name, v, ok := strings.Cut(a, "="); ok && targetOptions[name] && prodName(v) {
			return a
		}
		if targetOptions[a] && j+1 < len(args) && prodName(args[j+1]) {
			return a + " " + args[j+1]
		}
		if hostShaped(a) && prodName(HostOf(a)) {
			return a
		}
		if prodVariable(a) {
			return a
		}
	}
	for _, e := range c.Env {
		if targetEnv[e.Name] && prodName(e.Value) {
			return e.Name + "=" + e.Value
		}
	}
	return ""
}

// prodName reports whether a word of a name, split at . - _ / and :, is a
// production word.
func prodName(v string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool {
		return r == '.' || r == '-' || r == '_' || r == '/' || r == ':' || r == '@'
	}) {
		if prodWords[w] {
			return true
		}
	}
	return false
}

// hostShaped reports whether an argument is a host name, a URL or a
// connection string rather than a word or a path.
func hostShaped(a string) bool {
	if strings.Contains(a, "://") {
		return true
	}
	if strings.HasPrefix(a, "-") || strings.ContainsAny(a, " /\\*") || !strings.Contains(a, ".") {
		return false
	}
	// A file name (app.prod.yaml) is no host.
	if i := strings.LastIndexByte(a, '.'); i >= 0 {
		switch strings.ToLower(a[i+1:]) {
		case "yaml", "yml", "json", "toml", "env", "tf", "tfvars", "sql", "sh", "py", "js", "ts", "txt", "conf", "cfg", "ini", "db", "sqlite", "sqlite3", "log":
			return false
		}
	}
	return true
}

// prodVariable reports whether an argument is a variable named for a
// production target: $PROD_DATABASE_URL, ${PRODUCTION_REDIS_URL}.
func prodVariable(a string) bool {
	rest, ok := strings.CutPrefix(a, "$")
	if !ok {
		return false
	}
	rest = strings.Trim(rest, "{}")
	return strings.ContainsAny(rest, "_") && prodName(rest) && (strings.Contains(rest, "URL") || strings.Contains(rest, "HOST") || strings.Contains(rest, "DSN") || strings.Contains(rest, "URI"))
}

// changingActs are the effects a production target makes sure of.
var changingActs = map[string]bool{StoreDestroy: true, RemoteChange: true, AccessChange: true}

// OnProduction raises the effects of command i found from out[from:] that
// change or destroy, and were only guessed at, when c names a production
// target: the act is judged against that target.
func OnProduction(c *shell.Command, i int, out []Effect, from int) []Effect {
	prod := ""
	for k := from; k < len(out); k++ {
		e := &out[k]
		if e.Command != i || !changingActs[e.Effect] || e.Confidence != Low || e.Local != "" && !e.LocalAssumed {
			continue
		}
		if prod == "" {
			if prod = Production(c); prod == "" {
				return out
			}
		}
		e.Confidence, e.Local, e.LocalAssumed = Medium, "", false
		e.Target += " on " + prod
	}
	return out
}
