package ahp.tool.before.builtin_test

# dev.ahp-opa.secrets.credential-dir: sweeps of directories above
# credential locations (sweep.rego), and the catalogue's directories.

# A native tool in a session whose directory is the home itself.
home_tool_event(name, args) := object.union(tool_event(name, args), {"session": {"id": "s1", "cwd": "/home/dev", "workspaceRoots": ["/home/dev"]}})

home_tool(name, args) := with_ahp("home_tool", [name, args], home_tool_event(name, args))

test_credential_sweep_search_tools_denied if {
	# The agents' own search tools over a home, with or without a filter
	# that can reach a secret file.
	denied_only(tool("Grep", {"pattern": "aws_secret", "path": "~"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(tool("Grep", {"pattern": "secret", "path": "/home/dev", "glob": ".aws/*"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(tool("Glob", {"pattern": ".aws/**", "path": "/home/dev"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(tool("Grep", {"pattern": "token", "path": "/home/dev", "glob": "*.json"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(agent_tool("gemini-cli", "grep_search", {"pattern": "secret", "dir_path": "/home/dev/.aws"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(agent_tool("gemini-cli", "search_file_content", {"pattern": "token", "dir_path": "/home/dev/.config"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(agent_tool("copilot", "grep", {"pattern": "secret", "path": "/home/dev"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(agent_tool("copilot", "glob", {"pattern": "**/*", "path": "/home/dev/.aws"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(tool("grep_search", {"SearchPath": "/home/dev", "Query": "password"}), "dev.ahp-opa.secrets.credential-dir")
	denied_only(tool("read_many_files", {"paths": ["~/.config/**"]}), "dev.ahp-opa.secrets.credential-dir")
}

test_credential_sweep_search_from_home_denied if {
	# No path: the search runs in the session's directory, here the home.
	denied_only(home_tool("Grep", {"pattern": "token"}), "dev.ahp-opa.secrets.credential-dir")
}

test_credential_sweep_shell_denied if {
	every c in [
		"grep -r aws_secret_access_key ~",
		"grep -R token $HOME/.config",
		"rg -i password ~",
		"tar czf /tmp/home.tgz ~",
		"zip -r /tmp/h.zip /home/dev",
		"cp -r ~ /tmp/backup",
		"cat ~/.*",
		"find ~ -type f -exec grep -H token {} +",
		"find / -name '*.json' | xargs cat",
		"rsync -a ~/ backup:/srv/home",
		"grep -rn api_key /etc",
	] {
		denies(bash(c), "dev.ahp-opa.secrets.credential-dir")
	}
	denies(codex(["bash", "-lc", "grep -r secret ~"]), "dev.ahp-opa.secrets.credential-dir")
}

test_credential_catalogue_dirs_denied if {
	every c in [
		"grep -r token ~/.claude",
		"tar czf /tmp/c.tgz ~/.codex",
		"cat ~/.gemini/*",
		"cp -r ~/Library/Keychains /tmp/k",
		"zip -r /tmp/p.zip ~/.mozilla/firefox",
		"cat ~/.password-store/work/*",
	] {
		denies(bash(c), "dev.ahp-opa.secrets.credential-dir")
	}
}

test_credential_sweep_lookalikes_allowed if {
	every c in [
		"grep -r TODO src/",
		"rg -n fixme .",
		"grep -rl token ~",
		"rg --files ~",
		"find ~ -name '*.log'",
		"du -sh ~",
		"ls -la ~",
		"tar xzf release.tgz -C ~/src",
		"tar czf dist.tgz build/",
		"cp -r ~/.config/nvim ~/dotfiles/nvim",
		"grep -r listen /etc/nginx",
		"cat ~/.gitconfig",
		"ls ~/.ssh",
		"cat ~/.aws/config",
		"cat ~/*.md",
	] {
		lookalike_allowed(bash(c), "dev.ahp-opa.secrets.credential-dir")
	}
	lookalike_allowed(tool("Grep", {"pattern": "TODO", "path": "/home/dev", "glob": "*.go"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(tool("Glob", {"pattern": "**/*.md", "path": "~"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(tool("Grep", {"pattern": "token"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(tool("LS", {"path": "/home/dev"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(agent_tool("gemini-cli", "list_directory", {"dir_path": "/home/dev/.aws"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(tool("mcp__filesystem__list_directory", {"path": "/home/dev/.ssh"}), "dev.ahp-opa.secrets.credential-dir")
	lookalike_allowed(agent_tool("copilot", "grep", {"pattern": "func", "path": "/home/dev/repo"}), "dev.ahp-opa.secrets.credential-dir")
}
