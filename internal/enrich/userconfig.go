package enrich

import (
	"regexp"
	"strings"
)

// User configuration: the files in a home directory that configure the
// user's tools (~/.gitconfig, ~/.npmrc, ~/.ssh/config, ~/.config/…,
// ~/Library/Preferences/…). Writing one changes how every later session
// and every program of the user behaves, which is the config.change
// effect; caches, installed programs and histories in the same places are
// not configuration.

// homeStateFiles are dotfiles at the top of a home directory that
// programs keep as state, not configuration.
var homeStateFiles = map[string]bool{
	".bash_history": true, ".zsh_history": true, ".python_history": true, ".node_repl_history": true,
	".lesshst": true, ".viminfo": true, ".wget-hsts": true, ".sqlite_history": true,
	".psql_history": true, ".mysql_history": true, ".rediscli_history": true, ".DS_Store": true,
	".sudo_as_admin_successful": true, ".cache": true, ".local": true,
}

// configDirs are the home directories whose every file is configuration.
var configDirs = []string{".config/", "Library/Preferences/"}

// noConfigDirs are home directories of caches, data and installed code.
var noConfigDirs = []string{".cache/", ".local/", "Library/Caches/", ".npm/_", ".cargo/registry/", ".cargo/git/", ".rustup/", ".m2/repository/", ".gradle/caches/", ".nvm/versions/", ".pyenv/versions/", ".rbenv/versions/", ".bun/install/", ".deno/", ".vscode/extensions/", ".Trash/"}

// configName matches the names of configuration files in other dot
// directories of the home (~/.docker/config.json, ~/.aws/config,
// ~/.m2/settings.xml, ~/.pip/pip.conf, ~/.cargo/config.toml).
var configName = regexp.MustCompile(`(?i)^(config|credentials|settings|daemon\.json|.*\.(conf|cfg|ini|toml|properties)|.*rc|(config|settings)\.(json|ya?ml|xml))$`)

// userConfigPath reports whether abs, outside the workspace, is a user
// configuration file of the home directory home.
func userConfigPath(abs, home string) bool {
	if home == "" || home == "/" {
		return false
	}
	rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(home, "/")+"/")
	if !ok || rel == "" {
		return false
	}
	for _, d := range noConfigDirs {
		if strings.HasPrefix(rel, d) {
			return false
		}
	}
	for _, d := range configDirs {
		if strings.HasPrefix(rel, d) && len(rel) > len(d) {
			return true
		}
	}
	first, rest, nested := strings.Cut(rel, "/")
	if !strings.HasPrefix(first, ".") || first == "." || first == ".." {
		return false
	}
	if !nested {
		return !homeStateFiles[first]
	}
	base := rest[strings.LastIndexByte(rest, '/')+1:]
	return configName.MatchString(base)
}
