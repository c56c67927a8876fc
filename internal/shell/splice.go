package shell

import (
	"path"
	"slices"
)

// ViaScript marks a command found in a definition that another command
// runs: a package.json script, a Makefile recipe, a script file.
const ViaScript = "script"

// ViaLater marks a command found in text written to a file that runs it
// later: a shell rc file, a Makefile recipe, a CI step, a build script.
const ViaLater = "later"

// ViaAPI marks the CLI command a raw call to a service's API amounts to
// (curl to the Docker socket's /containers/create is docker run).
const ViaAPI = "api"

// Splice appends the commands of sub as run by the command at parent:
// their indices are shifted, the top-level ones get parent as their
// parent and via as the way they are reached, and all sit one level
// below parent. Commands that did not change directory run in dir
// (absolute); a relative cd in sub is taken from dir. It appends at most
// limit commands in all and reports how many it dropped.
func (a *Analysis) Splice(sub *Analysis, parent int, via, dir string, limit int) (dropped int) {
	if parent < 0 || parent >= len(a.Commands) {
		return len(sub.Commands)
	}
	offset := len(a.Commands)
	base := a.Commands[parent].Depth + 1
	n := len(sub.Commands)
	if room := limit - len(a.Commands); n > room {
		n = max(room, 0)
		dropped = len(sub.Commands) - n
	}
	for i := range n {
		c := sub.Commands[i]
		c.Depth += base
		if w := a.Commands[parent].Where; len(w) > 0 {
			c.Where = append(slices.Clip(w), c.Where...)
		}
		if c.Parent < 0 {
			c.Parent, c.Via = parent, via
		} else {
			c.Parent += offset
		}
		inputs := make([]int, 0, len(c.Inputs))
		for _, in := range c.Inputs {
			if in < n {
				inputs = append(inputs, in+offset)
			}
		}
		c.Inputs = inputs
		switch {
		case c.Dir == "":
			c.Dir = dir
		case !path.IsAbs(c.Dir):
			c.Dir = path.Join(dir, c.Dir)
		}
		a.Commands = append(a.Commands, c)
	}
	return dropped
}
