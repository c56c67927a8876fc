package ahp.tool.before.builtin_test

# dev.ahp-opa.shell.unparseable

test_unparseable_denied if {
	denied_only(bash("echo 'unterminated"), "dev.ahp-opa.shell.unparseable")
	denied_only(bash("if true; then ls"), "dev.ahp-opa.shell.unparseable")
	denied_only(bash("ls )"), "dev.ahp-opa.shell.unparseable")
}

test_unparseable_still_checks_what_parsed if {
	# A shell runs the commands before the syntax error.
	d := codes(bash("rm -rf /\nls )"))
	"dev.ahp-opa.shell.unparseable" in d
	"dev.ahp-opa.fs.rm-recursive-critical" in d
	denies(bash(`bash -c "ls; fi"`), "dev.ahp-opa.shell.unparseable")
}

test_unparseable_lookalikes_allowed if {
	lookalike_allowed(bash(`echo "it's fine"`), "dev.ahp-opa.shell.unparseable")
	lookalike_allowed(bash("cat <<'EOF'\n( unbalanced ' quotes inside a heredoc\nEOF"), "dev.ahp-opa.shell.unparseable")
	lookalike_allowed(bash("echo 'done' | sh"), "dev.ahp-opa.shell.unparseable")
	lookalike_allowed(bash("[[ -f x ]] && (( n++ )) && echo ${arr[@]}"), "dev.ahp-opa.shell.unparseable")
}

# dev.ahp-opa.shell.too-complex

test_too_complex_denied if {
	denied_only(bash("echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo x)))))))))"), "dev.ahp-opa.shell.too-complex")
	denied_only(bash("cat <(cat <(cat <(cat <(cat <(cat <(cat <(cat <(cat <(ls)))))))))"), "dev.ahp-opa.shell.too-complex")
	denied_only(bash("echo {1..9}{1..9}{1..9}{1..9}"), "dev.ahp-opa.shell.too-complex")
}

test_too_complex_still_checks_what_was_read if {
	d := codes(bash("rm -rf ~; echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo x)))))))))"))
	d == {"dev.ahp-opa.shell.too-complex", "dev.ahp-opa.fs.rm-recursive-critical"}
	denies(bash("echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}; git push -f"), "dev.ahp-opa.git.force-push")
}

test_too_complex_lookalikes_allowed if {
	lookalike_allowed(bash("echo $(echo $(echo $(date)))"), "dev.ahp-opa.shell.too-complex")
	lookalike_allowed(bash("echo {1..9}{1..9}"), "dev.ahp-opa.shell.too-complex")
	lookalike_allowed(bash(`bash -c "bash -c 'bash -c ls'"`), "dev.ahp-opa.shell.too-complex")
}
