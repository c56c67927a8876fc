package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import input.ahp.shell.programs

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
# A team adds a row to data.ahp_opa.config.secret_printers (same shape,
# keyed by program) with no Rego.
secret_printers := {
	"vault": [
		{"path": ["kv", "get"]}, {"path": ["kv", "export"]}, {"path": ["read"]},
		{"path": ["token", "create"]}, {"path": ["print", "token"]}, {"path": ["write", "auth"]},
	],
	"sops": [{"options": ["-d", "--decrypt"]}, {"path": ["decrypt"]}, {"path": ["edit"], "options": ["--show"]}],
	"ansible-vault": [{"path": ["view"]}, {"path": ["decrypt"], "options": ["--output"], "operand": `^-$`}, {"path": ["decrypt"], "not": ["--output"]}],
	"aws": [
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
	],
	"gcloud": [
		{"path": ["secrets", "versions", "access"]},
		{"path": ["print-access-token"]},
		{"path": ["print-identity-token"]},
		{"path": ["sql", "generate-login-token"]},
		{"path": ["iam", "service-accounts", "keys", "create"], "operand": `^(-|/dev/stdout)$`},
	],
	"az": [
		{"path": ["keyvault", "secret", "show"]},
		{"path": ["keyvault", "secret", "download"], "operand": `^/dev/stdout$`},
		{"path": ["get-access-token"]},
		{"path": ["storage", "account", "keys", "list"]},
		{"path": ["acr", "credential", "show"]},
		{"path": ["ad", "sp", "credential", "reset"]},
		{"path": ["ad", "sp", "create-for-rbac"]},
		{"path": ["cosmosdb", "keys", "list"]},
	],
	"gh": [{"path": ["auth", "token"]}, {"path": ["auth", "status"], "options": ["-t", "--show-token"]}],
	"glab": [{"path": ["auth", "status"], "options": ["-t", "--show-token"]}, {"path": ["config", "get", "token"]}],
	"op": [
		{"path": ["read"]}, {"path": ["item", "get"], "options": ["--reveal", "--fields", "--otp", "--format"]},
		{"path": ["document", "get"]}, {"path": ["inject"], "not": ["-o", "--out-file"]},
	],
	"pass": [{"path": ["show"]}, {"path": ["otp"]}],
	"gopass": [{"path": ["show"]}, {"path": ["cat"]}, {"path": ["otp"]}],
	"bw": [{"path": ["get", "password"]}, {"path": ["get", "item"]}, {"path": ["get", "notes"]}, {"path": ["get", "totp"]}, {"path": ["export"]}],
	"lpass": [{"path": ["show"]}, {"path": ["export"]}],
	"keepassxc-cli": [{"path": ["show"]}, {"path": ["export"]}],
	"secret-tool": [{"path": ["lookup"]}],
	"kwallet-query": [{"options": ["-r", "--read-password"]}],
	"security": [
		{"path": ["find-generic-password"], "options": ["-w", "-g"]},
		{"path": ["find-internet-password"], "options": ["-w", "-g"]},
		{"path": ["dump-keychain"], "options": ["-d"]},
		{"path": ["export"]},
	],
	"kubectl": _kubectl_printers,
	"oc": _kubectl_printers,
	"kubecolor": _kubectl_printers,
	"git": [
		{"path": ["credential", "fill"]}, {"path": ["credential", "get"]},
		{"path": ["show"], "operand": `:(.*/)?(\.env(\.[A-Za-z0-9_-]+)?|\.envrc|[^/]*\.(pem|key|p12|pfx)|id_(rsa|dsa|ecdsa|ed25519)|credentials(\.json)?|secrets?\.ya?ml|\.npmrc|\.pypirc|\.netrc)$`, "except": `(?i)[.-](example|sample|template|dist|defaults|schema)$`},
		{"path": ["cat-file"], "operand": `:(.*/)?(\.env(\.[A-Za-z0-9_-]+)?|\.envrc|[^/]*\.(pem|key)|id_(rsa|ed25519)|credentials(\.json)?)$`, "except": `(?i)[.-](example|sample|template|dist|defaults|schema)$`},
	],
	"npm": _npm_printers,
	"pnpm": _npm_printers,
	"yarn": _npm_printers,
	"heroku": [{"path": ["config"]}, {"path": ["config:get"]}, {"path": ["auth:token"]}],
	"doppler": [{"path": ["secrets", "download"]}, {"path": ["secrets", "get"]}, {"path": ["secrets"], "not": ["--only-names"]}, {"path": ["configure", "get", "token"]}],
	"infisical": [{"path": ["secrets"]}, {"path": ["export"]}],
	"chamber": [{"path": ["read"]}, {"path": ["export"]}],
	"aws-vault": [{"path": ["export"]}],
	"netlify": [{"path": ["env:get"]}, {"path": ["env:list"], "options": ["--plain", "--json"]}],
	"railway": [{"path": ["variables"]}],
	"pulumi": [{"path": ["stack", "output"], "options": ["--show-secrets"]}, {"path": ["config"], "options": ["--show-secrets"]}],
	"firebase": [{"path": ["login:ci"]}],
	"sf": [{"path": ["org", "display"], "options": ["--verbose"]}],
	"gpg": [{"options": ["--export-secret-keys", "--export-secret-subkeys"]}, {"options": ["-d", "--decrypt"], "not": ["-o", "--output"]}],
	"gpg2": [{"options": ["--export-secret-keys", "--export-secret-subkeys"]}],
}

_kubectl_printers := [
	{"path": ["get", "secret"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get", "secrets"], "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["get"], "operand": `^secrets?/`, "output": `^(yaml|json|jsonpath.*|go-template.*|custom-columns.*|template.*)$`},
	{"path": ["view-secret"]},
	{"path": ["create", "token"]},
	{"path": ["config", "view"], "options": ["--raw", "--flatten"]},
]

_npm_printers := [
	{"path": ["config", "get"], "operand": `(?i)auth|token|password`},
	{"path": ["token", "create"]},
]

# The built-in rows of a program, and those a team added.
_printer_rows(name) := array.concat(object.get(secret_printers, name, []), _team_rows(name))

_team_rows(name) := rows if {
	rows := config.secret_printers[name]
	is_array(rows)
} else := []

_credential_access contains _command_trigger(cmd) if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	rows := _printer_rows(name)
	count(rows) > 0
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	some row in rows
	_prints_secret(cmd, row)
	not _secret_consumed(i)
}

# Credential helpers print the login they are asked for.
_credential_access contains _command_trigger(cmd) if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	regex.match(`^(docker|git)-credential-`, name)
	some i in ixs
	cmd := input.ahp.shell.commands[i]
	"get" in cmd.args
}

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
