// Package suggest finds the valid name a mistyped one was meant to be, for
// "did you mean" hints in errors about configuration keys, rule ids and
// shadow ids, so that every such hint follows one rule.
package suggest

import (
	"fmt"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

// Nearest returns the candidate closest to s by edit distance (insertions,
// deletions and substitutions of runes), or "" when none is close enough
// to be a plausible typo: at most max(2, len(s)/3) edits, len counted in
// runes. Of equally close candidates the first wins; nothing is near "".
func Nearest(s string, candidates []string) string {
	if s == "" {
		return ""
	}
	n := utf8.RuneCountInString(s)
	limit := max(2, n/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		// The distance is at least the difference in length: skipping on
		// it keeps a huge mistyped value from costing len(s) × len(c).
		if diff := utf8.RuneCountInString(c) - n; diff >= bestD || -diff >= bestD {
			continue
		}
		if d := levenshtein.ComputeDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is the hint that ends an error about s: `; did you mean "x"?`
// for the Nearest candidate x, or "" when there is none.
func DidYouMean(s string, candidates []string) string {
	if near := Nearest(s, candidates); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}
