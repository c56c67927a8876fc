package redact

import (
	"strings"
	"testing"
)

// BenchmarkString masks a short log message with nothing to mask, a short
// one with a token, and 10 KiB of JSON-like text with one secret field.
func BenchmarkString(b *testing.B) {
	r := Default()
	inputs := map[string]string{
		"clean-message": "policy evaluation finished for tool Bash in session s1: allowed `git status` after 312µs",
		"token-message": "echo ghp_Zq7Rk2Wm9Xv4Tp6Ys3Ln8Hc5Zq7Rk2Wm9Xv4 | gh auth login --with-token",
		"json-10KiB":    strings.Repeat(`{"path":"src/main.go","line":12,"text":"func main() { run(os.Args) }"},`, 140) + `{"password":"hunter22"}`,
	}
	for name, s := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				r.String(s)
			}
		})
	}
}
