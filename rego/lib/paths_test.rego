package ahp.lib.paths_test

import data.ahp.lib.paths

test_written_out_expressions_match_the_lists if {
	paths.system_re == paths.under(paths.system_dirs)
	paths.temp_re == paths.under(paths.temp_dirs)
	paths.startup_home_dirs_re == paths.under(paths.startup_home_dirs)
}

test_system_and_temp if {
	paths.system({"path": "/etc/hosts"})
	paths.system({"path": "C:/Program Files (x86)/x"})
	paths.system({"path": "/home"})
	not paths.system({"path": "/etcetera"})
	not paths.system({"path": "/var/tmp/x"})
	not paths.system({"path": "/srv/app/x", "inside_workspace": true})
	paths.temp({"path": "/tmp"})
	not paths.temp({"path": "/tmpfoo"})
}

test_critical if {
	paths.critical({"path": "/", "root": true})
	paths.critical({"path": "/home/dev", "home": true})
	paths.critical({"path": "/data"})
	paths.critical({"path": "/usr/lib"})
	not paths.critical({"path": "/home/dev/repo/build", "inside_workspace": true})
	not paths.critical({"path": "/repo", "inside_workspace": true})
	not paths.critical({"path": "/tmp"})
}

test_secret_files if {
	paths.env_file({"base": ".env"})
	paths.env_file({"base": ".env.production"})
	paths.env_file({"base": "prod.env"})
	not paths.env_file({"base": ".env.example"})
	not paths.env_file({"base": "environment.md"})
	paths.ssh_private_key({"path": "/home/u/.ssh/id_ed25519", "base": "id_ed25519"})
	not paths.ssh_private_key({"path": "/home/u/.ssh/id_ed25519.pub", "base": "id_ed25519.pub"})
	# The catalogue's verdict, as ahp-opa marks the path object.
	paths.credential_file({"path": "/home/u/.aws/credentials", "home_rel": ".aws/credentials", "base": "credentials", "credential": "aws"})
	not paths.credential_file({"path": "/home/u/.aws/config", "home_rel": ".aws/config", "base": "config"})
	paths.credential_dir({"path": "/home/u/.aws", "home_rel": ".aws", "base": ".aws", "credential_dir": "aws"})
	paths.holds_credentials({"path": "/home/u", "home_rel": "", "base": "u", "holds_credentials": true})
	paths.credential_file({"path": "/x/server.key", "base": "server.key"})
	not paths.credential_file({"path": "/x/ca.pem", "base": "ca.pem"})
}

test_startup_hooks_and_agent_files if {
	paths.startup_file({"path": "/home/u/.bashrc", "home_rel": ".bashrc"})
	paths.startup_file({"path": "/etc/cron.d/x"})
	paths.startup_file({"path": "/home/u/.bash_aliases", "home_rel": ".bash_aliases"})
	paths.startup_file({"path": "/home/u/.oh-my-zsh/custom/x.zsh", "home_rel": ".oh-my-zsh/custom/x.zsh"})
	paths.startup_file({"path": "/home/u/.config/fish/functions/ls.fish", "home_rel": ".config/fish/functions/ls.fish"})
	not paths.startup_file({"path": "/home/u/.oh-my-zsh/themes/x.zsh-theme", "home_rel": ".oh-my-zsh/themes/x.zsh-theme"})
	paths.authorized_keys({"path": "/root/.ssh/authorized_keys"})
	paths.git_hook({"path": "/r/.git/hooks/pre-commit"})
	paths.agent_config({"path": "/r/.claude/settings.local.json"})
	paths.agent_config({"path": "/r/.mcp.json"})
	paths.agent_config({"path": "/r/.roo/mcp.json"})
	paths.agent_config({"path": "/r/opencode.json"})
	paths.agent_config({"path": "/home/u/.codeium/windsurf/mcp_config.json"})
	paths.agent_config({"path": "/home/u/.config/Claude/claude_desktop_config.json"})
	not paths.agent_config({"path": "/r/src/opencode.json.md"})
	not paths.agent_config({"path": "/r/.continue/prompts/x.md"})
	not paths.agent_config({"path": "/r/.claude/commands/x.md"})
	paths.block_device({"path": "/dev/nvme0n1"})
	not paths.block_device({"path": "/dev/null"})
}

# The predicates carry their lists written out (a rule reference costs a
# virtual-document evaluation per decision); these keep them in step.
test_predicates_cover_the_lists if {
	every d in paths.system_dirs {
		paths.system({"path": concat("", [d, "/x"])})
	}
	every d in paths.home_parents {
		paths.system({"path": d})
	}
	every d in paths.temp_dirs {
		paths.temp({"path": concat("", [d, "/x"])})
	}
	every d in paths.cache_dirs {
		paths.cache({"path": concat("", [d, "/x"])})
	}
	every d in paths.cache_home_dirs {
		paths.home_cache({"path": "/x", "home_rel": concat("", [d, "/x"])})
	}
	every f in paths.startup_home_files {
		paths.startup_file({"path": "/x", "home_rel": f})
	}
	every d in paths.startup_home_dirs {
		paths.startup_file({"path": "/x", "home_rel": concat("", [d, "/x"])})
	}
}

test_installed_dependency if {
	every p in [
		"/home/dev/repo/vendor/phpstan/phpstan/.git",
		"/home/dev/repo/node_modules/x/.git",
		"/home/dev/repo/packages/web/node_modules/@scope/y/.git",
		"/home/dev/repo/ios/Pods/Alamofire/.git",
		"/home/dev/repo/Carthage/Checkouts/Quick/.git",
		"/home/dev/repo/.build/checkouts/swift-nio/.git",
		"/home/dev/repo/deps/phoenix/.git",
	] {
		paths.installed_dependency(p)
	}
	every p in [
		"/home/dev/repo/.git",
		"/home/dev/repo/vendor",
		"/home/dev/repo/node_modules",
		"/home/dev/repo/src/vendoring/.git",
		"/home/dev/repo/my-node_modules/x/.git",
	] {
		not paths.installed_dependency(p)
	}
}
