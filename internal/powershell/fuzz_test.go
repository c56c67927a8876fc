package powershell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTranslate checks that any input is read and translated without
// panicking, and that the translation of valid UTF-8 stays valid UTF-8.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		"Remove-Item -Recurse -Force ~/x", "iwr u | iex", "iex (iwr u).Content",
		"'a''b' \"c`\"d$(e)\" `", "(((", "{ { }", "[Convert]::FromBase64String('cgBtAA==')",
		"$x = gc y; irm -Uri u -Body $x", "a > b 2>&1 | c && d || e &", "<# x", "${env:A}",
		"Invoke-Command -cn h { rm x }", "% { $_ }", "Start-Process p -Verb RunAs -ArgumentList 'a','b'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		out, _ := Translate(src)
		if len(out) > 8*len(src)+64<<10+maxLine(out) {
			t.Errorf("Translate(%q) gives %d bytes, over its budget", src, len(out))
		}
		if utf8.ValidString(src) && !utf8.ValidString(out) {
			t.Errorf("Translate(%q) is not valid UTF-8: %q", src, out)
		}
		Script([]string{"-c", src}, false)
		if c := TranslateCmd(src); utf8.ValidString(src) && !utf8.ValidString(c) {
			t.Errorf("TranslateCmd(%q) is not valid UTF-8: %q", src, c)
		}
	})
}

// maxLine is the length of the longest line: the budget is checked after
// each translated script, so one line may pass it.
func maxLine(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, len(l))
	}
	return n
}
