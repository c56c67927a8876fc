package redact

import "strings"

// phraseWords are the words followed, after a space, by the secret they
// name: "password hunter2", netrc's "login bob password hunter2".
var phraseWords = []string{"password", "passphrase"}

// maskPhrases masks the value after the word password or passphrase
// (any case) when a space, not a separator, stands between them: netrc
// lines ("machine h login u password X") and free text ("the password
// Xy7#kq!z"). Prose about passwords is not a secret, so outside netrc a
// value is masked only when it is quoted or looks made rather than
// written: four characters or more with a digit, a symbol or an upper
// case letter after its first ("password reset", "Password Reset", "your
// password (optional)" stay).
func maskPhrases(s string) string {
	// Both words hold a double s; most text, JSON of code included, has
	// none in any case and is not scanned byte by byte.
	if !strings.Contains(s, "ss") && !strings.Contains(s, "SS") && !strings.Contains(s, "sS") && !strings.Contains(s, "Ss") {
		return s
	}
	var spans [][2]int
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != 'p' || i > 0 && (isNameByte(s[i-1]) || s[i-1] >= 0x80) {
			continue
		}
		var kw string
		for _, w := range phraseWords {
			if len(s)-i > len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				kw = w
				break
			}
		}
		if kw == "" {
			continue
		}
		j := i + len(kw)
		if s[j] != ' ' && s[j] != '\t' {
			continue
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		quoted := j < len(s) && (s[j] == '\'' || s[j] == '"' || strings.HasPrefix(s[j:], `\"`))
		start, end := wordValue(s, j)
		if !quoted {
			for end > start && strings.IndexByte(".,;:!?)]}", s[end-1]) >= 0 && end-start > 1 {
				end-- // sentence punctuation after the value
			}
		}
		v := s[start:end]
		switch {
		case v == "" || strings.HasPrefix(v, Mask):
		case quoted || netrcLogin(s[:i]) || madeUp(v):
			spans = append(spans, [2]int{start, end})
		}
		i = end - 1
	}
	return replaceSpans(s, spans)
}

// netrcLogin reports whether before ends with a netrc "login NAME".
func netrcLogin(before string) bool {
	before = strings.TrimRight(before, " \t\r\n")
	k := strings.LastIndexAny(before, " \t\r\n")
	if k < 0 {
		return false
	}
	before = strings.TrimRight(before[:k], " \t\r\n")
	return strings.HasSuffix(before, "login") &&
		(len(before) == len("login") || strings.IndexByte(" \t\r\n\"", before[len(before)-len("login")-1]) >= 0)
}

// MadeUp reports whether a value looks chosen as a password or token
// rather than written as a word (madeUp).
func MadeUp(v string) bool { return madeUp(v) }

// madeUp reports a value that looks chosen as a password rather than
// written as a word: at least four bytes, not opening with punctuation,
// with a digit, a symbol or an upper-case letter after its first byte.
func madeUp(v string) bool {
	if len(v) < minPairValue || strings.IndexByte("([{<-", v[0]) >= 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z':
		case c >= 'A' && c <= 'Z':
			if i > 0 {
				return true
			}
		default:
			return true
		}
	}
	return false
}
