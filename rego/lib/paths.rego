# METADATA
# title: Path classification
# description: |
#   Classifies the path objects of input.ahp (tool.paths, a command's paths,
#   a redirection's path): system directories, temporary directories,
#   secrets and files that configure shells, SSH, git or the agent itself.
#   A path object has `path` (absolute and clean), `base`, `home_rel` when
#   it lies in a home directory, and flags such as `root`, `home`,
#   `inside_workspace` and `outside_workspace`.
package ahp.lib.paths

# Directories the operating system owns.
system_dirs := [
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
	"/opt", "/proc", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var",
	"/System", "/Library", "/Applications", "/private", "/nix", "/cores",
	"C:/Windows", "C:/Program Files", "C:/Program Files (x86)", "C:/ProgramData",
]

# Directories whose whole content is disposable.
temp_dirs := ["/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/var/folders", "/private/var/folders", "/dev/shm"]

# Parents of the users' home directories: deleting them deletes every home.
home_parents := {"/home", "/Users", "/root", "C:/Users"}

within(path, dir) if path == dir

within(path, dir) if startswith(path, concat("", [dir, "/"]))

# under builds the regular expression that matches a path in one of dirs.
# The rules use such expressions written out (one match is much cheaper
# than a loop over a list, and building them per decision costs as much);
# paths_test.rego checks that they match the lists.
under(dirs) := concat("", ["^(", concat("|", [regex.replace(d, `[.+()]`, `\$0`) | some d in dirs]), ")(/|$)"])

system_re := `^(/bin|/boot|/dev|/etc|/lib|/lib32|/lib64|/libx32|/opt|/proc|/sbin|/snap|/srv|/sys|/usr|/var|/System|/Library|/Applications|/private|/nix|/cores|C:/Windows|C:/Program Files|C:/Program Files \(x86\)|C:/ProgramData)(/|$)`

temp_re := `^(/tmp|/var/tmp|/private/tmp|/private/var/tmp|/var/folders|/private/var/folders|/dev/shm)(/|$)`

# system holds for a path in a system directory, temporary ones and the
# workspace (a project in /srv/app) excepted.
system(p) if {
	regex.match(`^(/bin|/boot|/dev|/etc|/lib|/lib32|/lib64|/libx32|/opt|/proc|/sbin|/snap|/srv|/sys|/usr|/var|/System|/Library|/Applications|/private|/nix|/cores|C:/Windows|C:/Program Files|C:/Program Files \(x86\)|C:/ProgramData)(/|$)`, p.path)
	not temp(p)
	not p.inside_workspace
}

system(p) if p.path in {"/home", "/Users", "/root", "C:/Users"}

temp(p) if regex.match(`^(/tmp|/var/tmp|/private/tmp|/private/var/tmp|/var/folders|/private/var/folders|/dev/shm)(/|$)`, p.path)

# Caches that package managers fill and refill on demand in system
# directories and root's home: image builds empty them (rm -rf
# /var/lib/apt/lists/*), and nothing is lost.
cache_dirs := ["/var/cache", "/var/lib/apt/lists", "/root/.cache", "/root/.npm/_cacache"]

# The user's own caches. Deleting one is still deleting data outside the
# workspace (the real-world sets and corpus label rm -rf of
# ~/Library/Caches/… and ~/.gradle/caches dangerous): a team that cleans
# them allows the path with exceptions.paths. home_cache names them for
# rules that want to tell them apart.
cache_home_dirs := [
	".cache", ".npm/_cacache", ".npm/_logs", ".gradle/caches", ".m2/repository",
	".cargo/registry/cache", ".yarn/cache", ".pnpm-store", "Library/Caches", "go/pkg/mod/cache",
]

# cache holds for a path in a system cache, or the cache itself.
cache(p) if regex.match(`^(/var/cache|/var/lib/apt/lists|/root/\.cache|/root/\.npm/_cacache)(/|$)`, p.path)

# home_cache holds for a path in a cache of the user's home. ~/.cache as a
# whole is not one: some tools keep state there, so only what lies below
# it (~/.cache/pip) is.
home_cache(p) if regex.match(`^(\.cache/.|(\.npm/_cacache|\.npm/_logs|\.gradle/caches|\.m2/repository|\.cargo/registry/cache|\.yarn/cache|\.pnpm-store|Library/Caches|go/pkg/mod/cache)(/|$))`, p.home_rel)

# critical holds for a path whose deletion wrecks the machine or the
# user's data: /, a home directory, a system directory, or a directory
# just below / (/data, /mnt).
critical(p) if p.root

critical(p) if p.home

critical(p) if {
	system(p)
	not cache(p)
}

critical(p) if {
	regex.match(`^/[^/]+/?\*?$`, p.path)
	not temp(p)
	not p.inside_workspace
}

# env_file holds for a dotenv file: .env, .env.local, .env.production,
# prod.env, .envrc. Templates (.env.example, .env.sample, .env.template,
# .env.dist, .env.defaults) hold no secrets and are not env files here.
env_file(p) if {
	regex.match(`^(\.env(\..+)?|\.envrc|.+\.env)$`, p.base)
	not env_template(p)
}

env_template(p) if regex.match(`(?i)[.-](example|sample|template|dist|defaults|schema)$`, p.base)

# ssh_private_key holds for a private key in a .ssh directory (id_rsa,
# id_ed25519_sk, id_work; *.pub excepted), or a glob that can match one.
ssh_private_key(p) if {
	regex.match(`(^|/)\.ssh/id_[^/]*$`, p.path)
	not endswith(p.base, ".pub")
}

ssh_private_key(p) if {
	contains(p.path, "/.ssh/")
	p.glob
	regex.match(`^(\*.*|i\*.*|id\*.*|id_\*.*|\*)$`, p.base)
	not endswith(p.base, ".pub")
}

# credential_file holds for a file that holds credentials or tokens. Where
# credentials live is data: ahp-opa matches every path against its
# credential catalogue (agents' logins, cloud and cluster CLIs, registries,
# keychains, password managers, browser profiles, histories, system key
# stores; docs/policy.md, "Credential locations") and marks the path
# object with `credential`, the kind of secret. Key files are known by
# their names wherever they are (private_key).
credential_file(p) if p.credential

# credential_dir holds for a directory that holds credentials, named as a
# whole or through a glob (~/.aws, ~/.aws/*, ~/.password-store/work).
credential_dir(p) if p.credential_dir

# holds_credentials holds for a directory above credential locations (a
# home, ~/.config, /etc, /): reading it recursively sweeps them up.
holds_credentials(p) if p.holds_credentials

credential_file(p) if private_key(p)

# private_key holds for a key file by its extension (a .pem that names a
# certificate or a chain excepted) or an SSH key name outside ~/.ssh.
private_key(p) if regex.match(`(?i)\.(key|p12|pfx|ppk|jks|keystore|p8|kdbx)$`, p.base)

private_key(p) if {
	regex.match(`(?i)\.pem$`, p.base)
	not regex.match(`(?i)(cert|chain|ca[-_.]|^ca\.|bundle|pub|public)`, p.base)
}

private_key(p) if {
	regex.match(`^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$`, p.base)
	not contains(p.path, "/.ssh/")
}

# Shell startup files and other places that run code at login, relative to
# a home directory.
startup_home_files := {
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc",
	".tcshrc", ".kshrc", ".mkshrc", ".config/fish/config.fish", ".xprofile",
	".xinitrc", ".xsession", ".inputrc", ".pam_environment", ".bash_aliases",
	".xsessionrc", ".config/zsh/.zshrc", ".config/zsh/.zshenv", ".config/zsh/.zprofile",
	".config/powershell/Microsoft.PowerShell_profile.ps1", ".config/powershell/profile.ps1",
	"Documents/PowerShell/Microsoft.PowerShell_profile.ps1", "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1",
	".config/powershell/Microsoft.VSCode_profile.ps1", "Documents/PowerShell/profile.ps1", "Documents/WindowsPowerShell/profile.ps1",
	"Documents/PowerShell/Microsoft.VSCode_profile.ps1", ".login", ".logout", ".yashrc", ".config/yash/rc", ".oshrc", ".yshrc",
	".config/oils/oshrc", ".config/oils/yshrc", ".config/ion/initrc", ".xonshrc", ".config/xonsh/rc.xsh",
	".config/elvish/rc.elv", ".elvish/rc.elv", "Library/Application Support/elvish/rc.elv",
	".config/nushell/config.nu", ".config/nushell/env.nu", ".config/nushell/login.nu",
	"Library/Application Support/nushell/config.nu", "Library/Application Support/nushell/env.nu", "Library/Application Support/nushell/login.nu",
}

startup_home_dirs := {
	".config/fish/conf.d", ".config/autostart", ".config/systemd/user",
	"Library/LaunchAgents", ".config/environment.d", ".bashrc.d", ".zshrc.d",
	".oh-my-zsh/custom", ".config/fish/functions", ".config/plasma-workspace/env",
	".config/plasma-workspace/shutdown", ".config/autostart-scripts", ".kde/Autostart", ".kde4/Autostart",
	".config/xonsh/rc.d", ".config/nushell/autoload", ".local/share/nushell/vendor/autoload",
}

startup_home_dirs_re := `^(\.bashrc\.d|\.config/autostart|\.config/autostart-scripts|\.config/environment\.d|\.config/fish/conf\.d|\.config/fish/functions|\.config/nushell/autoload|\.config/plasma-workspace/env|\.config/plasma-workspace/shutdown|\.config/systemd/user|\.config/xonsh/rc\.d|\.kde/Autostart|\.kde4/Autostart|\.local/share/nushell/vendor/autoload|\.oh-my-zsh/custom|\.zshrc\.d|Library/LaunchAgents)(/|$)`

startup_file(p) if p.home_rel in {".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".config/fish/config.fish", ".xprofile", ".xinitrc", ".xsession", ".inputrc", ".pam_environment", ".bash_aliases", ".xsessionrc", ".config/zsh/.zshrc", ".config/zsh/.zshenv", ".config/zsh/.zprofile", ".config/powershell/Microsoft.PowerShell_profile.ps1", ".config/powershell/profile.ps1", "Documents/PowerShell/Microsoft.PowerShell_profile.ps1", "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1", ".config/powershell/Microsoft.VSCode_profile.ps1", "Documents/PowerShell/profile.ps1", "Documents/WindowsPowerShell/profile.ps1", "Documents/PowerShell/Microsoft.VSCode_profile.ps1", ".login", ".logout", ".yashrc", ".config/yash/rc", ".oshrc", ".yshrc", ".config/oils/oshrc", ".config/oils/yshrc", ".config/ion/initrc", ".xonshrc", ".config/xonsh/rc.xsh", ".config/elvish/rc.elv", ".elvish/rc.elv", "Library/Application Support/elvish/rc.elv", ".config/nushell/config.nu", ".config/nushell/env.nu", ".config/nushell/login.nu", "Library/Application Support/nushell/config.nu", "Library/Application Support/nushell/env.nu", "Library/Application Support/nushell/login.nu"}

startup_file(p) if regex.match(`^(\.bashrc\.d|\.config/autostart|\.config/autostart-scripts|\.config/environment\.d|\.config/fish/conf\.d|\.config/fish/functions|\.config/nushell/autoload|\.config/plasma-workspace/env|\.config/plasma-workspace/shutdown|\.config/systemd/user|\.config/xonsh/rc\.d|\.kde/Autostart|\.kde4/Autostart|\.local/share/nushell/vendor/autoload|\.oh-my-zsh/custom|\.zshrc\.d|Library/LaunchAgents)(/|$)`, p.home_rel)

startup_file(p) if regex.match(`^(/etc/(profile|bash\.bashrc|bashrc|zshrc|zsh/zshrc|environment|crontab)|(/etc/profile\.d|/etc/cron\.(d|daily|hourly|weekly|monthly)|/etc/systemd/system|/Library/Launch(Agents|Daemons)|/var/spool/cron)(/.*)?)$`, p.path)

# A shell's own configuration directory: copying or linking into it (cp
# config.fish ~/.config/fish, ln -sfn ~/dots/nushell ~/.config/nushell)
# replaces the startup files it holds.
startup_file(p) if p.home_rel in {".config/fish", ".config/nushell", ".config/elvish", ".config/xonsh", ".config/zsh", ".config/powershell", ".config/ion", ".config/oils", ".config/yash", ".elvish", "Documents/PowerShell", "Documents/WindowsPowerShell", "Library/Application Support/nushell", "Library/Application Support/elvish"}

# A direnv file outside the workspace runs in every shell that enters its
# directory.
startup_file(p) if {
	p.base == ".envrc"
	p.outside_workspace
}

# zsh reads its startup files from $ZDOTDIR when it is set.
startup_file(p) if regex.match(`^\$\{?ZDOTDIR\}?/\.z(shrc|shenv|profile|login|logout)$`, p.raw)

# PowerShell names the user's profile $PROFILE.
startup_file(p) if regex.match(`(?i)^\$\{?profile\}?(\.(current|all)users?(current|all)hosts)?$`, p.raw)

# authorized_keys holds for the files that let someone log in over SSH.
authorized_keys(p) if regex.match(`(^|/)\.ssh/authorized_keys2?$`, p.path)

authorized_keys(p) if within(p.path, "/etc/ssh")

# git_hook holds for a file in a repository's hooks directory.
git_hook(p) if contains(p.path, "/.git/hooks/")

git_hook(p) if endswith(p.path, "/.git/hooks")

git_hook(p) if regex.match(`(^|/)\.husky/[^/_][^/]*$`, p.path)

# agent_config holds for the files that configure coding agents' hooks,
# permissions and MCP servers, and ahp-opa's own configuration: an agent
# that rewrites them can switch its guard off.
agent_config(p) if regex.match(
	concat("", [
		`(^|/)(\.claude/settings(\.local)?\.json|\.claude\.json|\.claude/hooks/.*|`,
		`managed-settings\.json|managed-mcp\.json|`,
		`\.gemini/settings\.json|\.gemini/hooks/.*|gemini-cli/settings\.json|system-defaults\.json|`,
		`\.codex/config\.toml|\.codex/hooks\.json|\.codex/hooks/.*|codex/managed_config\.toml|codex/requirements\.toml|`,
		`\.cursor/hooks\.json|\.cursor/hooks/.*|\.cursor/mcp\.json|\.cursor/cli-config\.json|`,
		`\.copilot/hooks/.*|\.copilot/config\.json|\.copilot/mcp-config\.json|`,
		`\.windsurf/hooks\.json|\.codeium/windsurf/hooks\.json|\.codeium/windsurf/mcp_config\.json|\.augment/settings\.json|\.config/goose/config\.yaml|`,
		`\.roo/mcp\.json|\.kiro/settings/mcp\.json|\.amazonq/mcp\.json|\.aws/amazonq/mcp\.json|opencode\.jsonc?|\.config/opencode/opencode\.jsonc?|`,
		`cline_mcp_settings\.json|claude_desktop_config\.json|\.continue/config\.(json|ya?ml)|\.continue/mcpServers/.*|`,
		`\.mcp\.json|\.config/ahp-opa/.*|`,
		`ahp-opa\.ya?ml|\.ahp/.*|\.github/hooks/.*\.json|\.vscode/mcp\.json|\.amp/settings\.json)$`,
	]),
	p.path,
)

# block_device holds for a disk or partition device node.
block_device(p) if regex.match(`^/dev/(sd|nvme|hd|vd|xvd|mmcblk|r?disk|md|dm-|mapper/|loop|sr)`, p.path)
