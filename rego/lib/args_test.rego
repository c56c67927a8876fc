package ahp.lib.args_test

import data.ahp.lib.args

test_options_and_operands if {
	args.options(["-rf", "a", "--", "-b"]) == ["-rf"]
	args.operands(["-rf", "a", "--", "-b"]) == ["a", "-b"]
	args.operands(["-", "x"]) == ["-", "x"]
	args.end_of_options(["a", "--", "b", "--"]) == 1
	args.end_of_options(["a"]) == 1
}

test_flags if {
	args.has_short_flag(["-v", "-Rf"], "R")
	not args.has_short_flag(["--force"], "f")
	args.has_long_flag(["--recur"], "--recursive", 5)
	not args.has_long_flag(["--re"], "--recursive", 5)
	args.has_option(["--prune=now"], "--prune")
}

test_short_flags_skip_option_values if {
	# git commit: -m takes a value, so in -mn the n is the message.
	args.short_flags(["-am", "msg"], {"m"}) == {"a", "m"}
	args.short_flags(["-mn"], {"m"}) == {"m"}
	args.short_flags(["-m", "-n"], {"m"}) == {"m"}
	args.short_flags(["-nm", "x"], {"m"}) == {"n", "m"}
}

test_option_values if {
	args.option_values(["-d", "@a", "--data=@b", "-d@c", "--data", "d"], "-d", "--data") == ["@a", "@b", "@c", "d"]
	args.option_value(["-X", "DELETE"], "-X", "--method") == "DELETE"
	not args.option_value(["-X"], "-X", "--method")
}
