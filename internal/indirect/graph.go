package indirect

import "strconv"

// walkGraph walks what a runner runs for the named roots: each task once,
// depth first. visit looks a task up and calls walk for each task it runs
// before or within itself, in order; depth is 0 for a root. A walk that
// reaches more than maxTargets tasks stops and says so, naming noun: a
// definition padded with harmless tasks must not hide the one that runs
// last. The first reason visit returns ends the walk.
func walkGraph(roots []string, noun string, visit func(name string, depth int, walk func(string) string) string) string {
	seen := map[string]bool{}
	var walk func(name string, depth int) string
	walk = func(name string, depth int) string {
		if seen[name] {
			return ""
		}
		seen[name] = true
		if len(seen) > maxTargets {
			return "more than " + strconv.Itoa(maxTargets) + " " + noun
		}
		return visit(name, depth, func(next string) string { return walk(next, depth+1) })
	}
	for _, name := range roots {
		if why := walk(name, 0); why != "" {
			return why
		}
	}
	return ""
}
