package ahp.tool.before.builtin

import data.ahp.lib.args
import data.ahp.lib.config
import data.ahp.lib.paths
import data.ahp.lib.shell
import data.ahp.lib.tools
import input.ahp.shell.programs

# METADATA
# title: Reading a private SSH key
# description: |
#   Denies file-read and search tools on a private key in a .ssh directory
#   (~/.ssh/id_*, /home/*/.ssh/id_*, C:/Users/*/.ssh/id_*; *.pub files are
#   public and allowed), and shell commands that show, copy or send such a
#   key or a glob that can match one (cat ~/.ssh/*), including through
#   code passed to an interpreter. Using a key without printing it (ssh -i,
#   ssh-add, ssh-keygen -y, chmod, ls) is allowed; copying the whole .ssh
#   directory (cp -r, tar, scp, rsync, zip) is denied.
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.ssh-private-key
violation contains {
	"reason": concat(" ", [
		"Blocked reading or copying a private SSH key; key material must never reach the agent or leave the machine.",
		"Use the matching .pub file if you need the public key, or ask the user to configure access.",
	]),
	"code": "dev.ahp-opa.secrets.ssh-private-key",
	"trigger": trigger,
} if {
	some trigger in _ssh_key_access
}

_ssh_key_access contains _path_trigger(p) if {
	input.ahp.sensitive
	some p in tools.read
	paths.ssh_private_key(p)
	not config.path_excepted(p)
}

# Code and options that name a key: python3 -c "open('~/.ssh/id_rsa')",
# curl -F f=@/home/u/.ssh/id_ed25519.
_ssh_key_access contains _arg_trigger(cmd, a, "with code naming a private key") if {
	input.ahp.shell.mentions[".ssh"]
	some i in input.ahp.shell.mentions[".ssh"]
	cmd := input.ahp.shell.commands[i]
	not cmd.name in {"ls", "stat", "file", "test", "[", "chmod", "chown", "chgrp", "touch", "rm", "rmdir", "mkdir", "ssh", "ssh-add", "ssh-keygen", "ssh-copy-id", "echo", "printf", "git", "cd", "pushd", "popd", "realpath", "readlink", "basename", "dirname", "wc", "du", "find", "which", "type", "command", "mv", "ln", "tee", "truncate", "shred", "source", ".", "open", "code", "xdg-open", "exa", "eza", "tree", "lsof", "fuser", "unlink", "setfacl", "getfacl", "chattr", "lsattr", "sops", "age", "gpg", "direnv", "dotenv", "docker", "docker-compose", "podman", "export", "declare", "trap", "bfg", "git-filter-repo", ""}
	some a in cmd.args
	contains(a, ".ssh")
	regex.match(`(^|[^A-Za-z0-9_.-])\.ssh[/\\]+id_[^/\\\s'"]*([\s'"]|$)`, a)
	not regex.match(`(^|[^A-Za-z0-9_.-])\.ssh[/\\]+id_[^/\\\s'"]*\.pub([\s'"]|$)`, a)
}

_ssh_key_access contains concat(" ", [input.ahp.shell.commands[i].name, p.raw]) if {
	input.ahp.tool.family == "shell"
	some name, ixs in programs
	name in {"cp", "rsync", "scp", "tar", "zip", "7z", "rclone"}
	some i in ixs
	input.ahp.shell.commands[i].name == name
	some p in input.ahp.shell.commands[i].paths
	regex.match(`(^|/)\.ssh$`, p.path)
}

# METADATA
# title: Reading .env files
# description: |
#   Denies file-read and search tools and shell commands that show, copy or
#   send a dotenv file: .env, .env.local, .env.production, prod.env,
#   .envrc. Templates (.env.example, .env.sample, .env.template, .env.dist)
#   are allowed, and so are commands that only name the file (ls, echo
#   .env >> .gitignore, git, source, chmod) or create a directory of that
#   name (python -m venv .env).
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.env-file
violation contains {
	"reason": concat(" ", [
		"Blocked reading a .env file; it holds secrets that must not reach the agent.",
		"Read .env.example for the variable names, or ask the user for the values you need.",
	]),
	"code": "dev.ahp-opa.secrets.env-file",
	"trigger": _path_trigger(p),
} if {
	input.ahp.sensitive
	some p in tools.read
	paths.env_file(p)
	not config.path_excepted(p)
}

# METADATA
# title: Reading credential files
# description: |
#   Denies reading stored credentials with a file tool or a shell command:
#   ~/.aws/credentials, ~/.netrc, ~/.git-credentials, ~/.docker/config.json,
#   ~/.kube/config, gh/gcloud/azure token stores, private keys (*.key,
#   *.p12, *.pem that is not a certificate), /proc/*/environ, /etc/shadow,
#   shell histories — every file of the credential catalogue (the agents'
#   own logins, cloud and cluster CLIs, registries, keychains, password
#   managers, browser profiles); commands that print secrets, from a table
#   (secret_commands.rego: gh auth token, vault kv get, sops -d, aws
#   secretsmanager get-secret-value, ssm get-parameter --with-decryption,
#   gcloud secrets versions access, op read, pass show, kubectl get secret
#   -o yaml, git show REF:.env, heroku config, security
#   find-generic-password -w), unless the output goes straight into a
#   program that uses it (… | docker login --password-stdin, sops -d … |
#   kubectl apply -f -); and the cloud metadata endpoints
#   (169.254.169.254, ECS's 169.254.170.2, metadata.google.internal). A file handed to the
#   program that loads it (dotnet restore --configfile, kubectl
#   --kubeconfig, a key given with --key, --keystore or --cert) is that
#   program's to use and is allowed.
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.credential-file
violation contains {
	"reason": concat(" ", [
		"Blocked reading stored credentials or tokens; they must not reach the agent.",
		"Use the tool that needs the credential directly (it reads it itself), or ask the user.",
	]),
	"code": "dev.ahp-opa.secrets.credential-file",
	"trigger": trigger,
} if {
	some trigger in _credential_access
}

_credential_access contains _path_trigger(p) if {
	input.ahp.sensitive
	some p in tools.read
	paths.credential_file(p)
	not paths.ssh_private_key(p)
	not config.path_excepted(p)
}

_credential_access contains _arg_trigger(cmd, a, "with code naming stored credentials") if {
	input.ahp.shell.mentions
	some word in ["environ", "credentials"]
	some i in input.ahp.shell.mentions[word]
	cmd := input.ahp.shell.commands[i]
	not cmd.name in {"ls", "stat", "file", "test", "[", "chmod", "chown", "chgrp", "touch", "rm", "rmdir", "mkdir", "ssh", "ssh-add", "ssh-keygen", "ssh-copy-id", "echo", "printf", "git", "cd", "pushd", "popd", "realpath", "readlink", "basename", "dirname", "wc", "du", "find", "which", "type", "command", "mv", "ln", "tee", "truncate", "shred", "source", ".", "open", "code", "xdg-open", "exa", "eza", "tree", "lsof", "fuser", "unlink", "setfacl", "getfacl", "chattr", "lsattr", "sops", "age", "gpg", "direnv", "dotenv", "docker", "docker-compose", "podman", "export", "declare", "trap", "bfg", "git-filter-repo", ""}
	some a in cmd.args
	regex.match(`environ|credentials`, a)
	regex.match(`/proc/(self|[0-9]+|\$\$|\*)/environ|(^|[^A-Za-z0-9_.-])\.aws/credentials`, a)
}

# Commands that print secrets (gh auth token, vault kv get, sops -d,
# aws secretsmanager get-secret-value, …) are a table: secret_commands.rego.

_credential_access contains concat(" ", ["metadata endpoint", u.host]) if {
	some u in tools.urls
	u.host in {"169.254.169.254", "169.254.170.2", "metadata.google.internal", "metadata", "100.100.100.200", "[fd00:ec2::254]", "fd00:ec2::254"}
}

# METADATA
# title: Dumping the environment
# description: |
#   Denies printing the whole environment, where API keys and tokens live:
#   env and printenv with no operand, export -p, declare -x/-p, set with no
#   argument, ps e; printenv of a secret variable; and echo or printf of
#   one ($AWS_SECRET_ACCESS_KEY, $GITHUB_TOKEN, $DB_PASSWORD). Variables
#   named only key, session or *_ID/_FILE/_URL are not secrets, and a dump
#   piped straight into a filter that keeps only names or a count
#   (set | cut -d= -f1, env | wc -l) is allowed. Interpreter code that
#   prints, serialises or sends the whole environment (print(os.environ),
#   console.log(process.env), puts ENV.to_h) is a dump too.
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.env-dump
violation contains {
	"reason": concat(" ", [
		"Blocked printing environment variables; the environment holds secrets that must not reach the agent.",
		"Check a single non-secret variable (e.g. `printenv PATH`), or test that a secret is set without printing it: `test -n \"$TOKEN\" && echo set`.",
	]),
	"code": "dev.ahp-opa.secrets.env-dump",
	"trigger": trigger,
} if {
	input.ahp.tool.family == "shell"
	some trigger in _env_dumps
}

_env_dumps contains trigger if {
	some name, ixs in programs
	name in {"env", "printenv", "export", "declare", "typeset", "set", "ps", "echo", "printf"}
	some i in ixs
	_dumps_env(input.ahp.shell.commands[i].name, input.ahp.shell.commands[i])
	not _feeds_login(i)
	not _names_only(i)
	trigger := input.ahp.shell.commands[i].name
}

# Interpreter code that prints, serialises or sends the whole
# environment dumps it as env does: print(os.environ),
# console.log(process.env), puts ENV.to_h, print_r(getenv()).
_env_dumps contains concat(" ", [cmd.name, "code printing the whole environment"]) if {
	some cmd in input.ahp.shell.commands
	cmd.code.env_dump
}

# A variable name that holds a secret: the words secret, token, password,
# credential, cookie, API/private/access key, or a key of a known service
# (OPENAI_API_KEY, STRIPE_KEY). A bare "key" or "session" is not one: loop
# variables and cache keys are named so. Names of files, URLs and ids that
# belong to a secret (KEY_FILE, AUTH_URL, SESSION_ID) are not secrets either.
_secret_var(name) if {
	regex.match(`(?i)((^|_)secrets?($|_)|(^|_)tokens?($|_)|secret_?key|client_?secret|[a-z]token$|passw(or)?d|passwd|_pwd$|api_?key|private_?key|access_?key|credentials?($|_)|cookie|_pat$|^pat$|dsn$|^(aws|gh|github|gitlab|npm|openai|anthropic|stripe|slack|sentry|twilio|sendgrid|mailgun|azure|gcp|google|hf|huggingface|deploy|signing|master|encryption|license)_([a-z0-9]+_)*key$)`, name)
	not regex.match(`(?i)_(file|path|dir|url|uri|name|id|host|port|user|username|expiry|expires|ttl|type|enabled|header|version|length|env|endpoint|region|scopes?|count|limit|size|max|min|timeout|lifetime|prefix|format|mode|helper|store)$|^google_application_credentials$`, name)
}

_dumps_env("env", cmd) if {
	count(cmd.args) == 0
}

_dumps_env("env", cmd) if {
	every a in cmd.args {
		startswith(a, "-")
	}
	not "--help" in cmd.args
	not "--version" in cmd.args
}

_dumps_env("printenv", cmd) if {
	count(args.operands(cmd.args)) == 0
}

_dumps_env("printenv", cmd) if {
	some a in args.operands(cmd.args)
	_secret_var(a)
}

_dumps_env(name, cmd) if {
	name in {"export", "declare", "typeset"}
	every a in cmd.args {
		startswith(a, "-")
	}
	not "-f" in cmd.args
	not "-F" in cmd.args
}

_dumps_env("set", cmd) if {
	count(cmd.args) == 0
}

_dumps_env("ps", cmd) if {
	some a in cmd.args
	regex.match(`^[a-zA-Z]*e[a-zA-Z]*$`, a)
	not startswith(a, "-")
}

_dumps_env(name, cmd) if {
	name in {"echo", "printf"}
	some a in cmd.args
	some m in regex.find_all_string_submatch_n(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`, _printed(a), -1)
	_secret_var(m[1])
}

# _names_only holds when the dump of command i goes straight into a filter
# that keeps only the variable names or a count: set | cut -d= -f1,
# env | awk -F= '{print $1}', env | sed 's/=.*//', env | wc -l, env | grep -q X.
_names_only(i) if {
	some j, cmd in input.ahp.shell.commands
	i in cmd.inputs
	_name_filter(cmd.name, cmd.args)
}

_name_filter("cut", a) if {
	some d in args.option_values(a, "-d", "--delimiter")
	d == "="
	some f in args.option_values(a, "-f", "--fields")
	f == "1"
}

_name_filter(name, a) if {
	name in {"awk", "gawk", "mawk"}
	"=" in args.option_values(a, "-F", "")
	some p in a
	regex.match(`print\s+\$1\b`, p)
	not regex.match(`\$(0|[2-9])|print\s*(;|\}|$)`, p)
}

_name_filter(name, a) if {
	name in {"sed", "gsed"}
	some p in a
	regex.match(`^s([/|#,:])=\.\*[/|#,:]{2}g?$`, p)
}

_name_filter("wc", _)

_name_filter("grep", a) if {
	some o in args.options(a)
	regex.match(`^(-[a-zA-Z]*[qc][a-zA-Z]*|--quiet|--silent|--count)$`, o)
}

# METADATA
# title: Writing secrets into files
# description: |
#   Denies a file write or edit, or a here-document written by a shell
#   command, whose text holds a private key block or a live token (AWS
#   access keys, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google,
#   npm tokens). Writing into a .env file, the place for them, is allowed,
#   and so are documented placeholders (…EXAMPLE).
# custom:
#   severity: high
#   code: dev.ahp-opa.secrets.write-secret
violation contains {
	"reason": concat(" ", [
		"Blocked writing a secret (a private key or an access token) into a file; it would end up in the repository or a log.",
		"Read the secret from an environment variable or a secret manager instead, and keep the value in a git-ignored .env file.",
	]),
	"code": "dev.ahp-opa.secrets.write-secret",
	"trigger": trigger,
} if {
	some trigger in _writes_secret
}

# ahp-opa scans the text a call writes for the shapes of secrets before
# any rule runs, and lists what it finds in input.ahp.secrets: the kind
# (private-key, aws-access-key, github-token, …) and where it is (field,
# or command with redirect or arg; offset, length, line), never the secret
# itself. Stand-ins such as …EXAMPLE or ghp_xxxx… carry placeholder: true.

_writes_secret contains _call_trigger if {
	input.ahp.secrets
	input.ahp.tool.family == "file_write"
	_live_secret_in_content
	not _env_target
}

_writes_secret contains _call_trigger if {
	input.ahp.secrets
	input.ahp.tool.family == "file_edit"
	_live_secret_in_content
	not _env_target
}

_live_secret_in_content if {
	some f in input.ahp.secrets
	f.field
	not f.placeholder
}

_env_target if {
	input.ahp.tool.family == "file_write"
	some p in input.ahp.tool.paths
	paths.env_file(p)
}

_env_target if {
	input.ahp.tool.family == "file_edit"
	some p in input.ahp.tool.paths
	paths.env_file(p)
}

_writes_secret contains concat(" ", ["write", w.path.raw]) if {
	input.ahp.secrets
	input.ahp.writes
	input.ahp.tool.family == "shell"
	some w in shell.writes
	not paths.env_file(w.path)
	_writes_text(w.command)
}

# Command i writes a secret from its here-document, or from its arguments
# when it is echo or printf (the scan covers only those arguments) …
_writes_text(i) if {
	some f in input.ahp.secrets
	f.command == i
	not f.placeholder
}

# … or from the arguments of an echo or printf piped into it.
_writes_text(i) if {
	some j in input.ahp.shell.commands[i].inputs
	input.ahp.shell.commands[j].name in {"echo", "printf"}
	some f in input.ahp.secrets
	f.command == j
	f.arg >= 0
	not f.placeholder
}

# _printed is the text echo prints of an argument, less its command
# substitutions: "set=$([ -n "$NPM_TOKEN" ] && echo yes)" prints yes or
# nothing, never the token. The commands inside are analysed on their own.
_printed(a) := regex.replace(a, "\\$\\((?:[^()]|\\([^()]*\\))*\\)|`[^`]*`", "")

# _feeds_login holds when the output of command i goes straight into a
# login that reads a secret on stdin, the way registries and CLIs document
# it (echo "$CR_PAT" | docker login ghcr.io -u me --password-stdin): the
# value reaches the program, not the agent.
_feeds_login(i) if {
	some j, cmd in input.ahp.shell.commands
	_feeds_directly(i, j)
	cmd.name in {"docker", "podman", "buildah", "skopeo", "helm", "oras", "crane", "nerdctl", "regctl", "cosign"}
	"login" in cmd.args
	"--password-stdin" in cmd.args
}

_feeds_login(i) if {
	some j, cmd in input.ahp.shell.commands
	_feeds_directly(i, j)
	cmd.name == "gh"
	array.slice(cmd.args, 0, 2) == ["auth", "login"]
	"--with-token" in cmd.args
}

# _feeds_directly holds when command i's output reaches command j with no
# command between them (inputs are transitive: echo | tee | docker).
_feeds_directly(i, j) if {
	i in input.ahp.shell.commands[j].inputs
	not _feeds_through(i, j)
}

_feeds_through(i, j) if {
	some k in input.ahp.shell.commands[j].inputs
	i in input.ahp.shell.commands[k].inputs
}
