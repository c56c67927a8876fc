package engine

import (
	"strings"

	"github.com/ahp-opa/ahp-opa/adapters"
)

// agentOf names the agent of a native-hook event from its source
// (adapters.SourcePrefix + name), "" for any other source.
func agentOf(event map[string]any) string {
	src, _ := event["source"].(string)
	name, ok := strings.CutPrefix(src, adapters.SourcePrefix)
	if !ok || !adapters.Known(name) {
		return ""
	}
	return name
}
