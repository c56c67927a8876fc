package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.local

# Commands that print a stored secret, for dev.ahp-opa.secrets.credential-file
# (secrets.rego). What prints a secret is data, one row per act:
#
#   path     words that must appear, in this order, among the operands
#            (other words may come between: aws --profile p ssm …)
#   options  at least one of these options must be given (-w, --reveal)
#   output   a regular expression one value of -o/--output must match
#   operand  a regular expression one operand must match
#   not      options that turn the act into one that prints no secret
#   except   a regular expression: an operand matching it names no secret
#
# A command the effect model judged to reach no secret (lib/local.rego: an
# output template of metadata only, a dry run) prints none, whatever row.
#
# One rule per program, so that a lookup evaluates only that program's
# rows. A team adds rows in data.ahp_opa.config.secret_printers (same
# shape, keyed by program) with no Rego.
secret_printers["vault"] := [
	{"path": ["kv", "get"]}, {"path": ["kv", "export"]}, {"path": ["read"]},
	{"path": ["token", "create"]}, {"path": ["print", "token"]}, {"path": ["write", "auth"]},
]

secret_printers["sops"] := [{"options": ["-d", "--decrypt"]}, {"path": ["decrypt"]}, {"path": ["edit"], "options": ["--show"]}]

secret_printers["ansible-vault"] := [{"path": ["view"]}, {"path": ["decrypt"], "options": ["--output"], "operand": `^-$`}, {"path": ["decrypt"], "not": ["--output"]}]

secret_printers["aws"] := [
	{"path": ["secretsmanager", "get-secret-value"]},
	{"path": ["secretsmanager", "batch-get-secret-value"]},
	{"path": ["ssm", "get-parameter"], "options": ["--with-decryption"]},
	{"path": ["ssm", "get-parameters"], "options": ["--with-decryption"]},
	{"path": ["ssm", "get-parameters-by-path"], "options": ["--with-decryption"]},
	{"path": ["ecr", "get-login-password"]},
	{"path": ["ecr-public", "get-login-password"]},
	{"path": ["codeartifact", "get-authorization-token"]},
	{"path": ["sts", "get-session-token"]},
	{"path": ["sts", "assume-role"]},
	{"path": ["configure", "export-credentials"]},
	{"path": ["export-credentials"]},
	{"path": ["configure", "get"], "operand": `(?i)secret|session_token|access_key`},
	{"path": ["iam", "create-access-key"]},
	{"path": ["kms", "decrypt"]},
	{"path": ["rds", "generate-db-auth-token"]},
]

secret_printers["gcloud"] := [
	{"path": ["secrets", "versions", "access"]},
	{"path": ["print-access-token"]},
	{"path": ["print-identity-token"]},
	{"path": ["sql", "generate-login-token"]},
	{"path": ["iam", "service-accounts", "keys", "create"], "operand": `^(-|/dev/stdout)$`},
]

secret_printers["az"] := [
	{"path": ["keyvault", "secret", "show"]},
	{"path": ["keyvault", "secret", "download"], "operand": `^/dev/stdout$`},
	{"path": ["get-access-token"]},
	{"path": ["storage", "account", "keys", "list"]},
	{"path": ["acr", "credential", "show"]},
	{"path": ["ad", "sp", "credential", "reset"]},
	{"path": ["ad", "sp", "create-for-rbac"]},
	{"path": ["cosmosdb", "keys", "list"]},
]

secret_printers["gh"] := [{"path": ["auth", "token"]}, {"path": ["auth", "status"], "options": ["-t", "--show-token"]}]

secret_printers["glab"] := [{"path": ["auth", "status"], "options": ["-t", "--show-token"]}, {"path": ["config", "get", "token"]}]

secret_printers["op"] := [
	{"path": ["read"]}, {"path": ["item", "get"], "options": ["--reveal", "--fields", "--otp", "--format"]},
	{"path": ["document", "get"]}, {"path": ["inject"], "not": ["-o", "--out-file"]},
]

secret_printers["pass"] := [{"path": ["show"]}, {"path": ["otp"]}]

secret_printers["gopass"] := [{"path": ["show"]}, {"path": ["cat"]}, {"path": ["otp"]}]

secret_printers["bw"] := [{"path": ["get", "password"]}, {"path": ["get", "item"]}, {"path": ["get", "notes"]}, {"path": ["get", "totp"]}, {"path": ["export"]}]

secret_printers["lpass"] := [{"path": ["show"]}, {"path": ["export"]}]

secret_printers["keepassxc-cli"] := [{"path": ["show"]}, {"path": ["export"]}]

secret_printers["secret-tool"] := [{"path": ["lookup"]}]

secret_printers["kwallet-query"] := [{"options": ["-r", "--read-password"]}]

secret_printers["security"] := [
	{"path": ["find-generic-password"], "options": ["-w", "-g"]},
	{"path": ["find-internet-password"], "options": ["-w", "-g"]},
	{"path": ["dump-keychain"], "options": ["-d"]},
	{"path": ["export"]},
]

secret_printers["kubectl"] := [
	{"path": ["get", "secret"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get", "secrets"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get"], "operand": `^secrets?/`, "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["view-secret"]},
	{"path": ["create", "token"]},
	{"path": ["config", "view"], "options": ["--raw", "--flatten"]},
]

secret_printers["oc"] := [
	{"path": ["get", "secret"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get", "secrets"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get"], "operand": `^secrets?/`, "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["view-secret"]},
	{"path": ["create", "token"]},
	{"path": ["config", "view"], "options": ["--raw", "--flatten"]},
]

secret_printers["kubecolor"] := [
	{"path": ["get", "secret"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get", "secrets"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get"], "operand": `^secrets?/`, "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["view-secret"]},
	{"path": ["create", "token"]},
	{"path": ["config", "view"], "options": ["--raw", "--flatten"]},
]

secret_printers["git"] := [
	{"path": ["credential", "fill"]}, {"path": ["credential", "get"]},
	{"path": ["show"], "operand": `:(.*/)?(\.env(\.[A-Za-z0-9_-]+)?|\.envrc|[^/]*\.(pem|key|p12|pfx)|id_(rsa|dsa|ecdsa|ed25519)|credentials(\.json)?|secrets?\.ya?ml|\.npmrc|\.pypirc|\.netrc)$`, "except": `(?i)[.-](example|sample|template|dist|defaults|schema)$`},
	{"path": ["cat-file"], "operand": `:(.*/)?(\.env(\.[A-Za-z0-9_-]+)?|\.envrc|[^/]*\.(pem|key)|id_(rsa|ed25519)|credentials(\.json)?)$`, "except": `(?i)[.-](example|sample|template|dist|defaults|schema)$`},
]

secret_printers["npm"] := [
	{"path": ["config", "get"], "operand": `(?i)auth|token|password`},
	{"path": ["token", "create"]},
]

secret_printers["pnpm"] := [
	{"path": ["config", "get"], "operand": `(?i)auth|token|password`},
	{"path": ["token", "create"]},
]

secret_printers["yarn"] := [
	{"path": ["config", "get"], "operand": `(?i)auth|token|password`},
	{"path": ["token", "create"]},
]

secret_printers["heroku"] := [{"path": ["config"]}, {"path": ["config:get"]}, {"path": ["auth:token"]}]

secret_printers["doppler"] := [{"path": ["secrets", "download"]}, {"path": ["secrets", "get"]}, {"path": ["secrets"], "not": ["--only-names"]}, {"path": ["configure", "get", "token"]}]

secret_printers["infisical"] := [{"path": ["secrets"]}, {"path": ["export"]}]

secret_printers["chamber"] := [{"path": ["read"]}, {"path": ["export"]}]

secret_printers["aws-vault"] := [{"path": ["export"]}]

secret_printers["netlify"] := [{"path": ["env:get"]}, {"path": ["env:list"], "options": ["--plain", "--json"]}]

secret_printers["railway"] := [{"path": ["variables"]}]

secret_printers["pulumi"] := [{"path": ["stack", "output"], "options": ["--show-secrets"]}, {"path": ["config"], "options": ["--show-secrets"]}]

secret_printers["firebase"] := [{"path": ["login:ci"]}]

secret_printers["sf"] := [{"path": ["org", "display"], "options": ["--verbose"]}]

secret_printers["gpg"] := [{"options": ["--export-secret-keys", "--export-secret-subkeys"]}, {"options": ["-d", "--decrypt"], "not": ["-o", "--output"]}]

secret_printers["gpg2"] := [{"options": ["--export-secret-keys", "--export-secret-subkeys"]}]

# Credential helpers print the login they are asked for.
secret_printers["docker-credential-desktop"] := [{"path": ["get"]}]

secret_printers["docker-credential-osxkeychain"] := [{"path": ["get"]}]

secret_printers["docker-credential-pass"] := [{"path": ["get"]}]

secret_printers["docker-credential-secretservice"] := [{"path": ["get"]}]

secret_printers["docker-credential-wincred"] := [{"path": ["get"]}]

secret_printers["docker-credential-ecr-login"] := [{"path": ["get"]}]

secret_printers["docker-credential-gcloud"] := [{"path": ["get"]}]

secret_printers["docker-credential-gcr"] := [{"path": ["get"]}]

secret_printers["docker-credential-acr-env"] := [{"path": ["get"]}]

secret_printers["git-credential-manager"] := [{"path": ["get"]}]

secret_printers["git-credential-manager-core"] := [{"path": ["get"]}]

secret_printers["git-credential-osxkeychain"] := [{"path": ["get"]}]

secret_printers["git-credential-libsecret"] := [{"path": ["get"]}]

secret_printers["git-credential-store"] := [{"path": ["get"]}]

secret_printers["git-credential-cache"] := [{"path": ["get"]}]

secret_printers["git-credential-wincred"] := [{"path": ["get"]}]

secret_printers["git-credential-oauth"] := [{"path": ["get"]}]



# The programs of the table, written out: a set test costs nothing, the
# table lookup an evaluation (secret_commands_test.rego keeps them equal).
_printer_programs := {"ansible-vault", "aws", "aws-vault", "az", "bw", "chamber", "docker-credential-acr-env", "docker-credential-desktop", "docker-credential-ecr-login", "docker-credential-gcloud", "docker-credential-gcr", "docker-credential-osxkeychain", "docker-credential-pass", "docker-credential-secretservice", "docker-credential-wincred", "doppler", "firebase", "gcloud", "gh", "git", "git-credential-cache", "git-credential-libsecret", "git-credential-manager", "git-credential-manager-core", "git-credential-oauth", "git-credential-osxkeychain", "git-credential-store", "git-credential-wincred", "glab", "gopass", "gpg", "gpg2", "heroku", "infisical", "keepassxc-cli", "kubecolor", "kubectl", "kwallet-query", "lpass", "netlify", "npm", "oc", "op", "pass", "pnpm", "pulumi", "railway", "secret-tool", "security", "sf", "sops", "vault", "yarn"}

# The rows a team added are looked up apart.
_credential_access contains _command_trigger(cmd) if {
	input.ahp.tool.family == "shell"
	some name, ixs in input.ahp.shell.programs
	name in _printer_programs
	rows := secret_printers[name]
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some row in rows
	_may_print(cmd.args, row)
	_prints_secret(cmd, row)
	not _secret_consumed(i)
	not local.command(i) # the effect model's judgement: metadata only, a dry run
}

_credential_access contains _command_trigger(cmd) if {
	input.ahp.tool.family == "shell"
	data.ahp_opa.config.secret_printers
	some name, ixs in input.ahp.shell.programs
	rows := config.secret_printers[name]
	is_array(rows)
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some row in rows
	_may_print(cmd.args, row)
	_prints_secret(cmd, row)
	not _secret_consumed(i)
	not local.command(i) # the effect model's judgement: metadata only, a dry run
}

# A cheap first look: the row's first word is among the arguments.
_may_print(a, row) if row.path[0] in a

_may_print(_, row) if not row.path

_prints_secret(cmd, row) if {
	ops := args.operands(cmd.args)
	_ordered(ops, object.get(row, "path", []))
	_with_options(cmd.args, row)
	_with_operand(ops, row)
	_with_output(cmd.args, row)
	not _without(cmd.args, row)
}

_ordered(_, p) if count(p) == 0

_ordered(ops, p) if {
	count(p) == 1
	p[0] in ops
}

_ordered(ops, p) if {
	count(p) == 2
	some i, j
	ops[i] == p[0]
	ops[j] == p[1]
	j > i
}

_ordered(ops, p) if {
	count(p) == 3
	some i, j, k
	ops[i] == p[0]
	ops[j] == p[1]
	ops[k] == p[2]
	j > i
	k > j
}

_ordered(ops, p) if {
	count(p) == 4
	some i, j, k, l
	ops[i] == p[0]
	ops[j] == p[1]
	ops[k] == p[2]
	ops[l] == p[3]
	j > i
	k > j
	l > k
}

_with_options(_, row) if not row.options

_with_options(a, row) if {
	some o in row.options
	_given(a, o)
}

_given(a, o) if o in a

_given(a, o) if {
	some x in a
	startswith(x, concat("", [o, "="]))
}

_given(a, o) if {
	count(o) == 2
	startswith(o, "-")
	args.has_short_flag(a, substring(o, 1, 1))
}

_with_operand(_, row) if not row.operand

_with_operand(ops, row) if {
	some op in ops
	regex.match(row.operand, op)
	not _excepted(op, row)
}

_excepted(op, row) if regex.match(row.except, op)

_with_output(_, row) if not row.output

_with_output(a, row) if {
	some v in args.option_values(a, "-o", "--output")
	regex.match(row.output, v)
}

_with_output(a, row) if {
	some x in a
	startswith(x, "-o")
	not startswith(x, "-o=")
	count(x) > 2
	regex.match(row.output, substring(x, 2, -1))
}

_without(a, row) if {
	some o in row.not
	_given(a, o)
}

# _secret_consumed holds when command i's output goes straight into a
# program that uses it without showing it: a registry login reading the
# password on stdin, kubectl applying a decrypted manifest, gh setting a
# repository secret.
_secret_consumed(i) if _feeds_login(i)

_secret_consumed(i) if {
	some j, cmd in input.ahp.shell.commands
	_feeds_directly(i, j)
	_consumer(cmd)
}

_consumer(cmd) if {
	cmd.name in {"kubectl", "oc"}
	some v in cmd.args
	v in {"apply", "create", "replace"}
}

_consumer(cmd) if {
	cmd.name in {"gh", "glab"}
	array.slice(args.operands(cmd.args), 0, 2) in {["secret", "set"], ["variable", "set"]}
}

_consumer(cmd) if {
	cmd.name in {"vault", "aws", "gcloud", "az", "doppler", "fly", "flyctl", "wrangler", "vercel", "netlify"}
	some v in cmd.args
	v in {"put", "set", "create", "secrets", "login", "add", "import"}
	not "get" in cmd.args
}

_consumer(cmd) if {
	cmd.name == "helm"
	some v in cmd.args
	v in {"-", "/dev/stdin"}
}
