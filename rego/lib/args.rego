# METADATA
# title: Command-line argument helpers
# description: |
#   Reads the options and operands of an argument list (a command's args in
#   input.ahp.shell.commands) the way most Unix programs do: "-rf" is a
#   cluster of short flags, "--name=value" a long option, and "--" ends
#   the options.
package ahp.lib.args

# options lists the arguments that are options: they start with "-" and
# come before any "--".
options(args) := [a | some i, a in args; i < end; startswith(a, "-"); a != "-"] if {
	end := end_of_options(args)
}

# operands lists the arguments that are not options.
operands(args) := [a | some i, a in args; not _option_at(a, i, end)] if {
	end := end_of_options(args)
}

_option_at(a, i, end) if {
	i < end
	startswith(a, "-")
	a != "-"
}

_option_at(_, i, end) if i == end

# end_of_options is the index of the first "--", or count(args).
end_of_options(args) := min({i | some i, a in args; a == "--"}) if "--" in args

end_of_options(args) := count(args) if not "--" in args

_is_option(args, i) if _option_at(args[i], i, end_of_options(args))

_after_end_of_options(args, i) if i > end_of_options(args)

# has_short_flag holds when a single-dash option cluster contains letter:
# has_short_flag(["-rf", "x"], "f").
has_short_flag(args, letter) if {
	some o in options(args)
	not startswith(o, "--")
	contains(o, letter)
}

# has_long_flag holds when a long option is name or a GNU-style
# abbreviation of it at least min_len characters long (counting the
# dashes): has_long_flag(["--recur"], "--recursive", 5).
has_long_flag(args, name, min_len) if {
	some o in options(args)
	startswith(o, "--")
	n := split(o, "=")[0]
	count(n) >= min_len
	startswith(name, n)
}

# has_option holds when args hold the exact option name, alone or as
# name=value.
has_option(args, name) if {
	some o in options(args)
	split(o, "=")[0] == name
}

# short_flags returns the letters set in single-dash clusters, for a
# program whose options in `values` take a value: in "-am msg" a and m are
# set, in "-mn" only m is (n is its value), and the word after a cluster
# ending in a value option is not read as options.
short_flags(args, values) := {c |
	some i, a in args
	_cluster(args, i, values)
	chars := split(substring(a, 1, -1), "")
	some j, c in chars
	not _value_before(chars, j, values)
}

_cluster(args, i, values) if {
	_is_option(args, i)
	not startswith(args[i], "--")
	not _takes_next(args, i - 1, values)
}

# _takes_next holds when args[i] is a cluster whose first value option is
# its last letter, so args[i + 1] is that option's value.
_takes_next(args, i, values) if {
	i >= 0
	_is_option(args, i)
	not startswith(args[i], "--")
	chars := split(substring(args[i], 1, -1), "")
	first := min({j | some j, c in chars; c in values})
	first == count(chars) - 1
}

_value_before(chars, j, values) if {
	some k, c in chars
	k < j
	c in values
}

# option_value returns the value of the first -x VALUE, -xVALUE,
# --long VALUE or --long=VALUE in args.
option_value(args, short, long) := v if {
	vs := option_values(args, short, long)
	count(vs) > 0
	v := vs[0]
}

# option_values returns every value given to the option, in order.
option_values(args, short, long) := [v |
	some i, a in args
	not _after_end_of_options(args, i)
	some v in _value_at(args, i, short, long)
]

_value_at(args, i, _, long) := [substring(args[i], count(long) + 1, -1)] if {
	long != ""
	startswith(args[i], concat("", [long, "="]))
}

_value_at(args, i, short, long) := [args[i + 1]] if {
	args[i] in {short, long}
	args[i] != ""
	i + 1 < count(args)
}

_value_at(args, i, short, _) := [substring(args[i], 2, -1)] if {
	short != ""
	startswith(args[i], short)
	not startswith(args[i], "--")
	count(args[i]) > 2
}
