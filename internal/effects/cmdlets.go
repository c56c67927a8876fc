package effects

import (
	"strings"

	"github.com/ahp-opa/ahp-opa/internal/shell"
)

// cmdletVerbs maps the approved PowerShell verbs that change or destroy
// onto the table's verbs: a cmdlet the table does not know
// (Remove-AzResourceGroup, Publish-Module) is judged by its verb, as an
// unknown CLI is by its subcommand.
var cmdletVerbs = map[string]string{
	"remove": "remove", "uninstall": "uninstall", "publish": "publish", "grant": "grant",
	"revoke": "revoke", "reset": "reset", "deploy": "deploy", "sync": "sync", "push": "push",
}

// sessionNouns are the nouns of cmdlets that change only files or the
// PowerShell session: Remove-Item is a file delete, judged as rm is by
// the file rules, and Remove-Variable reaches nothing outside.
var sessionNouns = map[string]bool{
	"item": true, "itemproperty": true, "variable": true, "module": true, "job": true,
	"alias": true, "psdrive": true, "event": true, "pssession": true, "psbreakpoint": true,
	"typedata": true, "cimsession": true, "runspace": true,
}

// cmdletEffects appends the effect the verb of a Verb-Noun cmdlet speaks.
// A destroying verb is sure when -Force is given or the noun names a store
// of data (Remove-AzSqlDatabase).
func (m *Matcher) cmdletEffects(c *shell.Command, i int, out []Effect) []Effect {
	verb, noun, ok := strings.Cut(c.Name, "-")
	if !ok || noun == "" || strings.Contains(noun, "-") || len(m.verbs) == 0 {
		return out
	}
	if sessionNouns[noun] && (verb == "remove" || verb == "uninstall" || verb == "reset") {
		return out
	}
	v, ok := m.verbs[cmdletVerbs[verb]]
	if !ok {
		return out
	}
	e := Effect{
		Effect: v.Effect, Target: cmpOr(v.Target, c.Argv[0]), Program: c.Name, Command: i,
		Source:     Source{Kind: "verb", Verb: verb},
		Confidence: v.Confidence, Approvable: v.Approvable,
	}
	if v.Sure && e.Confidence == Low {
		for _, a := range c.Args() {
			if strings.EqualFold(a, "-Force") || strings.EqualFold(a, "-Confirm:$false") {
				e.Confidence = Medium
			}
		}
		for _, w := range nameWords(c.Argv[0]) {
			if storeNouns[w] {
				e.Confidence = Medium
			}
		}
	}
	return append(out, e)
}
