package main

import (
	"github.com/spf13/pflag"

	"github.com/ahp-opa/ahp-opa/bundles"
	"github.com/ahp-opa/ahp-opa/engine"
	"github.com/ahp-opa/ahp-opa/transport"
)

// addEngineFlags declares the flags every command that decides shares.
func addEngineFlags(fs *pflag.FlagSet) {
	fs.StringSlice("policy", nil, "Rego `path` (.rego file, directory or OPA bundle .tar.gz), repeatable; default: the built-in library")
	fs.Bool("with-builtin", false, "use the built-in library alongside --policy (without it, --policy replaces the library)")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("log-format", "auto", "auto (text on a terminal, JSON otherwise), text or json")
	fs.Duration("eval-timeout", engine.DefaultEvalTimeout, "deadline for one policy evaluation")
	fs.String("on-rule-error", string(engine.RuleErrorDeny), "what a deny rule that fails to evaluate means: deny (the event, naming the rule), ignore (the rule) or error (-32004)")
	fs.StringSlice("shadow", nil, "deny code or package to evaluate without answering (would_deny in audit, logs, metrics), repeatable")
	fs.Int("max-input-bytes", transport.DefaultMaxInputBytes, "largest request decided by the policy; larger ones are denied as too large to check")
	addPolicySourceFlags(fs)
}

// addPolicySourceFlags declares the flags about policy sources that every
// command deciding shares.
func addPolicySourceFlags(fs *pflag.FlagSet) {
	fs.Bool("verify-tests", false, "activate a policy only if its own Rego tests (_test.rego) pass")
	fs.String("verification-key", "", "PEM public `key`, or a file holding it, that local bundles must be signed with")
	fs.String("verification-key-id", "default", "key id of --verification-key in bundle signatures")
}

// addWatchFlags declares the reload flags of serve.
func addWatchFlags(fs *pflag.FlagSet) {
	fs.Bool("watch", true, "reload local policy files and the --config file when they change")
	fs.Duration("rescan-interval", bundles.DefaultRescanInterval, "also hash the local policy files this often, for changes file events miss (0: never)")
}
