package ahp.tool.before.builtin

import data.ahp.lib.config
import data.ahp.lib.paths
import input.ahp.shell.programs

# METADATA
# title: Deleting stored credentials or keys
# description: |
#   Denies deleting a file of the credential catalogue, a private key or
#   the contents of a credential directory, even one file at a time and
#   whatever program or interpreter call deletes it: rm ~/.ssh/id_rsa,
#   unlink ~/.aws/credentials, rm ~/.ssh/*, os.remove over
#   glob('~/.ssh/*'). A lost key or login cannot be recovered. Files in
#   the workspace, public keys, shell histories and exceptions.paths are
#   left alone.
# custom:
#   severity: high
#   code: dev.ahp-opa.fs.delete-credentials
violation contains {
	"reason": concat(" ", [
		"Blocked deleting stored credentials or keys; a lost key or login cannot be recovered.",
		"Leave the user's credentials in place; if one must go (a rotated key), ask the user to remove it.",
	]),
	"code": "dev.ahp-opa.fs.delete-credentials",
	"trigger": _path_trigger(p),
} if {
	some p in _deleted_credentials
}

_deleted_credentials contains p if {
	some name in ["rm", "unlink", "srm"]
	some i in programs[name]
	some p in input.ahp.shell.commands[i].paths
	_credential_target(p)
	not p.inside_workspace
	not config.path_excepted(p)
}

# The same act through a file tool that deletes (Cursor's delete_file,
# Augment's remove-files, an apply_patch Delete File).
_deleted_credentials contains p if {
	input.ahp.tool.family == "file_edit"
	_deletes_files
	some p in input.ahp.tool.paths
	_credential_target(p)
	not p.inside_workspace
	not config.path_excepted(p)
}

_credential_target(p) if {
	paths.credential_file(p)
	p.credential != "history" # a shell history is the user's to clear
}

_credential_target(p) if paths.ssh_private_key(p)

_credential_target(p) if {
	paths.credential_dir(p)
	p.glob
}
