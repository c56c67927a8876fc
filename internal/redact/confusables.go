package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldName returns name as the ASCII name it imitates: Cyrillic and Greek
// letters that look like Latin ones (pаssword with a Cyrillic а) become
// those letters, full-width forms (ＰＡＳＳＷＯＲＤ) their ASCII
// originals, and invisible format characters (a zero-width space, a soft
// hyphen) are dropped. A name a reader takes for "password" is judged as
// one. Other letters are kept, so a name in another script stays itself.
// The result is never longer than name.
func foldName(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		raw := name[i : i+size]
		i += size
		switch {
		case r >= 0xFF01 && r <= 0xFF5E: // full-width ASCII
			b.WriteByte(byte(r - 0xFEE0))
		case unicode.Is(unicode.Cf, r):
		default:
			if a, ok := lookAlikes[r]; ok {
				b.WriteByte(a)
			} else {
				b.WriteString(raw) // invalid bytes stay as they were
			}
		}
	}
	return b.String()
}

// lookAlikes maps the Cyrillic and Greek letters drawn like Latin ones in
// common fonts to those Latin letters.
var lookAlikes = map[rune]byte{
	// Cyrillic, lower case.
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'ԁ': 'd',
	'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ԍ': 'g',
	// Cyrillic, upper case.
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P',
	'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԛ': 'Q',
	'Ԝ': 'W',
	// Greek.
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M',
	'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'α': 'a', 'ι': 'i',
	'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'υ': 'u', 'χ': 'x',
	// Latin letters without their dot or with a hook.
	'ı': 'i', 'ȷ': 'j',
}
