package ahp.tool.before.builtin

import data.ahp.lib.config

# Rules written against what a call does (input.ahp.effects, see
# docs/policy.md "Effects") rather than which program it names: a CLI the
# effects table knows, a row a team added, or the verb of a CLI nobody
# listed all reach them the same way. An effect judged local (a dry run,
# a kind cluster, a loopback registry) or of low confidence never denies;
# library.disabled_effects switches an effect off for every rule here.
# Where the table marks an act approvable (a release, a deploy, a remote
# write), the deny is approvable: an agent with an approval prompt asks
# the user instead.

# METADATA
# title: Destroying data in a store
# description: |
#   Denies a call whose effect destroys data in a store that is not on this
#   machine: deleting cluster resources, cloud databases, buckets, tables,
#   secrets or backups, flushing a remote cache, dropping a database,
#   resetting a schema.
# custom:
#   severity: critical
#   code: dev.ahp-opa.effect.store-destroy
violation contains {
	"code": "dev.ahp-opa.effect.store-destroy",
	"reason": "Blocked a call that destroys data in a store that is not local; it cannot be undone from here. Run it against a local or throwaway target (a kind cluster, LocalStack, a local database), use the tool's dry run, or ask the user to run it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["store.destroy"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Publishing, releasing or deploying
# description: |
#   Denies, approvably, a call whose effect publishes a package or image,
#   creates a release or deploys: npm/cargo/twine publish, docker push to a
#   remote registry, gh release create, helm upgrade, vercel --prod, a
#   `deploy`/`publish`/`release` subcommand of any CLI.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.publish
violation contains {
	"code": "dev.ahp-opa.effect.publish",
	"reason": "Blocked a publish, release or deploy; it reaches users and is hard to take back. Use the tool's dry run or a local target, or ask the user to approve it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["publish"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Changing remote state
# description: |
#   Denies, approvably, a call whose effect changes state outside this
#   machine: terraform or pulumi apply, kubectl patch/scale, a merge,
#   remote secrets or config vars, database migrations against a remote
#   database.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.remote-change
violation contains {
	"code": "dev.ahp-opa.effect.remote-change",
	"reason": "Blocked a change to remote state. Show the plan or diff instead (terraform plan, kubectl diff), use a local target, or ask the user to approve it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["remote.change"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Changing who may do what
# description: |
#   Denies, approvably, a call whose effect changes access: IAM bindings and
#   policies, access keys and tokens, collaborators, deploy and SSH keys,
#   branch protection, repository visibility, database roles.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.access-change
violation contains {
	"code": "dev.ahp-opa.effect.access-change",
	"reason": "Blocked a change to who may do what (access, keys, visibility). Ask the user to make the change, or to approve it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["access.change"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Weakening a security control
# description: |
#   Denies a call whose effect switches a security control off: a firewall
#   disabled or opened to the internet, SELinux or AppArmor off, security
#   services stopped, audit logging stopped, public access blocks removed,
#   kernel hardening turned off.
# custom:
#   severity: critical
#   code: dev.ahp-opa.effect.security-weaken
violation contains {
	"code": "dev.ahp-opa.effect.security-weaken",
	"reason": "Blocked a call that weakens a security control. Leave the control on; if a change is needed, ask the user to make it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["security.weaken"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Reading a secret from a secret store
# description: |
#   Denies a call whose effect prints or exports a secret: vault kv get,
#   sops -d, aws secretsmanager get-secret-value, gcloud secrets versions
#   access, op read, pass show, gh auth token, kubectl get secret -o yaml.
#   The secret would land in the model's context and its logs; output
#   piped straight into a program that uses it without showing it (a
#   registry login, kubectl apply, gh secret set) is not printed.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.secret-read
violation contains {
	"code": "dev.ahp-opa.effect.secret-read",
	"reason": "Blocked a call that prints a secret into the conversation. Pass the secret to the program that needs it without printing it (op run, doppler run, an env file the tool reads), or ask the user.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["secret.read"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	not _secret_consumed(e.command)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Changing system or user configuration
# description: |
#   Denies, approvably, a call whose effect changes system or user
#   configuration: macOS defaults, the login shell, kernel parameters,
#   systemd units masked or edited, user accounts.
# custom:
#   severity: medium
#   code: dev.ahp-opa.effect.config-change
violation contains {
	"code": "dev.ahp-opa.effect.config-change",
	"reason": "Blocked a change to system or user configuration outside the workspace. Change the project's own configuration instead, or ask the user to approve it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["config.change"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Making something run later
# description: |
#   Denies a call whose effect makes something run later: systemd units
#   enabled, launchd jobs loaded, crontabs installed, at jobs, lingering
#   user services, autostart registry keys.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.persistence
violation contains {
	"code": "dev.ahp-opa.effect.persistence",
	"reason": "Blocked a call that makes something run later, outside this session. Run the task now in the foreground, or ask the user to schedule it.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["persistence"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# METADATA
# title: Running code fetched from elsewhere
# description: |
#   Denies a call whose effect runs code fetched from another machine
#   without it being reviewed: deno run https://…, plugins installed from a
#   URL.
# custom:
#   severity: high
#   code: dev.ahp-opa.effect.remote-code
violation contains {
	"code": "dev.ahp-opa.effect.remote-code",
	"reason": "Blocked running code fetched from elsewhere. Download it into the workspace, review it, then run the local copy.",
	"trigger": trigger,
	"effect": effect,
	"approvable": approvable,
} if {
	some i in input.ahp.effect_index["exec.remote-code"]
	e := input.ahp.effects[i]
	_effect_acts(e)
	trigger := _effect_trigger(e)
	effect := e.effect
	approvable := e.approvable
}

# _effect_acts holds for an effect the rules above act on.
_effect_acts(e) if {
	not e.local
	e.confidence != "low"
	not e.effect in config.disabled_effects
}

# _effect_trigger names the command and where its effect came from:
# "kubectl delete deploy web (store.destroy of cluster resources, from
# the data row kubectl delete)".
_effect_trigger(e) := concat("", [_effect_call(e), " (", e.effect, " of ", e.target, ", from ", _effect_source(e), ")"])

_effect_call(e) := _command_trigger(input.ahp.shell.commands[e.command]) if {
	e.command >= 0
} else := e.program

_effect_source(e) := concat(" ", ["the data row", e.source.row]) if {
	e.source.kind == "data"
} else := concat("", ["the verb '", e.source.verb, "' of a CLI the table does not know"]) if {
	e.source.kind == "verb"
} else := concat("", ["the word '", e.source.verb, "' in the name of ", e.source.row, ", whose definition could not be read"]) if {
	e.source.kind == "target-verb"
} else := concat("", ["the name of the script ", e.source.row, " ('", e.source.verb, "') and what it is told"]) if {
	e.source.kind == "script-name"
} else := concat("", ["where ", e.source.row, " lays its files"]) if {
	e.source.kind == "destination"
} else := concat(" ", [e.source.kind, object.get(e.source, "row", "")])
