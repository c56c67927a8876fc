package redact

import (
	"strings"
)

// flagMode says how a program's flag carries a password.
type flagMode uint8

const (
	// attached: only a value written onto the flag is one (mysql -pSECRET);
	// the flag alone asks for the password, and the next word is
	// something else (mysql -p db names a database).
	attached flagMode = iota + 1
	// either: the value is attached (-pSECRET, -p=SECRET, --pass=SECRET)
	// or the next word (-p SECRET).
	either
	// userColon: the value is user:password (curl -u); only the part
	// after the first colon is a secret, and a bare user has none.
	userColon
	// userPercent: the value is user%password (smbclient -U).
	userPercent
	// passPrefix: the value names where a password comes from, and
	// pass:SECRET is the password itself (openssl -passin).
	passPrefix
)

// program describes the flags of one program that carry a password.
// Their meaning is the program's own: -p is a password to mysql and a
// port to ssh, so a flag is judged only after the program's name.
type program struct {
	flags map[string]flagMode
	// sub is a subcommand the flags belong to (docker login -p); before
	// it, the flags mean something else (docker run -p is a port).
	sub string
	// batch is a short flag that makes the last operand the password
	// (htpasswd -b file user password).
	batch byte
	// wraps: the first operand is another command, whose flags are its
	// own (sshpass -p pw ssh -p 2222 host).
	wraps bool
}

var (
	mysqlFlags = map[string]flagMode{"-p": attached}
	loginFlags = map[string]flagMode{"-p": either}
	mongoFlags = map[string]flagMode{"-p": either}
	ldapFlags  = map[string]flagMode{"-w": either}
	curlFlags  = map[string]flagMode{"-u": userColon, "--user": userColon, "-U": userColon, "--proxy-user": userColon}
	smbFlags   = map[string]flagMode{"-U": userPercent, "--user": userPercent}
	redisFlags = map[string]flagMode{"-a": either, "--pass": either}
	mssqlFlags = map[string]flagMode{"-P": either}
	keytool    = map[string]flagMode{"-storepass": either, "-keypass": either, "-srcstorepass": either, "-deststorepass": either, "-srckeypass": either, "-destkeypass": either}
)

// programs are the programs known to take a password on their command
// line, by the base name of their executable.
var programs = map[string]program{
	"mysql": {flags: mysqlFlags}, "mysqldump": {flags: mysqlFlags}, "mysqladmin": {flags: mysqlFlags},
	"mysqlimport": {flags: mysqlFlags}, "mysqlshow": {flags: mysqlFlags}, "mysqlcheck": {flags: mysqlFlags},
	"mysqlpump": {flags: mysqlFlags}, "mysqlbinlog": {flags: mysqlFlags}, "mariadb": {flags: mysqlFlags},
	"mariadb-dump": {flags: mysqlFlags}, "mariadb-admin": {flags: mysqlFlags},
	"sshpass":   {flags: map[string]flagMode{"-p": either}, wraps: true},
	"redis-cli": {flags: redisFlags}, "valkey-cli": {flags: redisFlags}, "keydb-cli": {flags: redisFlags},
	"htpasswd": {batch: 'b'},
	"docker":   {flags: loginFlags, sub: "login"}, "podman": {flags: loginFlags, sub: "login"},
	"nerdctl": {flags: loginFlags, sub: "login"}, "buildah": {flags: loginFlags, sub: "login"},
	"skopeo": {flags: loginFlags, sub: "login"}, "helm": {flags: loginFlags, sub: "login"},
	"oras":       {flags: loginFlags, sub: "login"},
	"curl":       {flags: curlFlags},
	"ldapsearch": {flags: ldapFlags}, "ldapmodify": {flags: ldapFlags}, "ldapadd": {flags: ldapFlags},
	"ldapdelete": {flags: ldapFlags}, "ldapwhoami": {flags: ldapFlags}, "ldappasswd": {flags: ldapFlags},
	"ldapcompare": {flags: ldapFlags}, "ldapmodrdn": {flags: ldapFlags},
	"smbclient": {flags: smbFlags}, "rpcclient": {flags: smbFlags},
	"zip": {flags: map[string]flagMode{"-P": either}}, "unzip": {flags: map[string]flagMode{"-P": either}},
	"7z": {flags: map[string]flagMode{"-p": attached}}, "7za": {flags: map[string]flagMode{"-p": attached}},
	"7zr":    {flags: map[string]flagMode{"-p": attached}},
	"sqlcmd": {flags: mssqlFlags}, "bcp": {flags: mssqlFlags}, "osql": {flags: mssqlFlags}, "isql": {flags: mssqlFlags},
	"mongo": {flags: mongoFlags}, "mongosh": {flags: mongoFlags}, "mongodump": {flags: mongoFlags},
	"mongorestore": {flags: mongoFlags}, "mongoexport": {flags: mongoFlags}, "mongoimport": {flags: mongoFlags},
	"mongostat": {flags: mongoFlags}, "mongotop": {flags: mongoFlags},
	"openssl":    {flags: map[string]flagMode{"-passin": passPrefix, "-passout": passPrefix, "-pass": passPrefix, "-k": either}},
	"ssh-keygen": {flags: map[string]flagMode{"-N": either, "-P": either}},
	"keytool":    {flags: keytool},
}

// programStart marks the bytes a program in programs starts with, and
// maxProgram is the longest name: most words are rejected without a map
// look-up.
var programStart, maxProgram = func() (set [256]bool, longest int) {
	for name := range programs {
		set[name[0]] = true
		longest = max(longest, len(name))
	}
	return set, longest
}()

func lookupProgram(name string) (program, bool) {
	if len(name) < 2 || len(name) > maxProgram || !programStart[name[0]] {
		return program{}, false
	}
	p, ok := programs[name]
	return p, ok
}

// endsCommand reports the bytes that end a simple command: what follows
// is another command, with flags of its own.
func endsCommand(c byte) bool {
	switch c {
	case ';', '|', '&', '\n', '(', ')', '`':
		return true
	}
	return false
}

// endsWord reports the bytes that end a word: spaces, the end of a
// command, and a quote that closes an enclosing string (the command was
// a JSON string's text).
func endsWord(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '"' || endsCommand(c)
}

// maskCommands masks the passwords given on command lines in s to the
// programs listed in programs: mysql -pSECRET, sshpass -p SECRET,
// curl -u user:SECRET, htpasswd -b file user SECRET. Words are split at
// spaces; a value that opens with a quote runs to its closing quote.
func maskCommands(s string) string {
	// Every password masked here follows a flag, after a space; text
	// without one (most JSON) is not scanned word by word.
	if !strings.Contains(s, " -") {
		return s
	}
	var spans [][2]int
	var prog program
	active, subSeen := false, false
	lastOperand := [2]int{-1, -1}
	operands := 0
	batch := false
	endCommand := func() {
		if active && batch && operands >= 2 {
			spans = append(spans, lastOperand)
		}
		active, batch, operands = false, false, 0
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if endsCommand(c) {
			endCommand()
			i++
			continue
		}
		if endsWord(c) {
			i++
			continue
		}
		j := i
		for j < len(s) && !endsWord(s[j]) {
			j++
		}
		word := s[i:j]
		if !active {
			// Once a program is named, its operands are not programs:
			// htpasswd -b /etc/htpasswd names a file.
			if p, ok := lookupProgram(baseName(word)); ok {
				prog, active, subSeen = p, true, p.sub == ""
				batch, operands = false, 0
			}
			i = j
			continue
		}
		if word[0] != '-' {
			if !subSeen && word == prog.sub {
				subSeen = true
			} else if prog.wraps {
				active = false // the wrapped command's flags are not ours
			}
			operands++
			lastOperand = [2]int{i, j}
			i = j
			continue
		}
		if prog.batch != 0 && len(word) > 1 && word[1] != '-' && strings.IndexByte(word[1:], prog.batch) >= 0 {
			batch = true
		}
		if !subSeen {
			i = j
			continue
		}
		flag, mode := matchFlag(prog.flags, word)
		if mode == 0 {
			i = j
			continue
		}
		vstart := i + len(flag)
		if vstart < len(s) && s[vstart] == '=' {
			vstart++
		} else if vstart == j { // the flag alone: its value is the next word
			if mode == attached {
				i = j
				continue
			}
			vstart = j
			for vstart < len(s) && (s[vstart] == ' ' || s[vstart] == '\t') {
				vstart++
			}
		}
		start, end := wordValue(s, vstart)
		// Past the value and its closing quote, as long as its opening one.
		i = max(min(end+start-vstart, len(s)), j)
		switch mode {
		case userColon, userPercent:
			sep := byte(':')
			if mode == userPercent {
				sep = '%'
			}
			k := strings.IndexByte(s[start:end], sep)
			if k < 0 {
				continue
			}
			start += k + 1
		case passPrefix:
			if !strings.HasPrefix(s[start:end], "pass:") {
				continue
			}
			start += len("pass:")
		}
		if end > start && !strings.HasPrefix(s[start:end], Mask) {
			spans = append(spans, [2]int{start, end})
		}
	}
	endCommand()
	return replaceSpans(s, spans)
}

// matchFlag returns the flag of flags that word is or starts with: -p in
// -pSECRET (a short flag takes its value attached), --pass in
// --pass=SECRET (a long one only after =).
func matchFlag(flags map[string]flagMode, word string) (string, flagMode) {
	if name, _, ok := strings.Cut(word, "="); ok {
		if m := flags[name]; m != 0 {
			return name, m
		}
	}
	if m := flags[word]; m != 0 {
		return word, m
	}
	if len(word) > 2 && word[1] != '-' {
		if m := flags[word[:2]]; m != 0 {
			return word[:2], m
		}
	}
	return "", 0
}

// wordValue returns the span of the value that starts at s[i]: to its
// closing quote when it opens with one (the quotes kept outside), to the
// end of the word otherwise.
func wordValue(s string, i int) (start, end int) {
	if i >= len(s) {
		return i, i
	}
	if strings.HasPrefix(s[i:], `\"`) {
		k := strings.Index(s[i+2:], `\"`)
		if k < 0 {
			return i + 2, len(s)
		}
		return i + 2, i + 2 + k
	}
	if q := s[i]; q == '"' || q == '\'' {
		j := i + 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' && q == '"' && j+1 < len(s) {
				j++
			}
			j++
		}
		return i + 1, min(j, len(s))
	}
	j := i
	for j < len(s) && !endsWord(s[j]) && s[j] != '\'' {
		j++
	}
	return i, j
}

// baseName returns the program a word names: its text after the last
// slash, quote, colon or =, so that /usr/bin/mysql and a JSON string's
// first word ("command":"mysql) name mysql.
func baseName(word string) string {
	for k := len(word) - 1; k >= 0; k-- {
		switch word[k] {
		case '/', '"', '\'', ':', '=', '\\':
			return word[k+1:]
		}
	}
	return word
}

// replaceSpans writes s with each of spans, in order and disjoint,
// replaced by Mask.
func replaceSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		if sp[0] < last || sp[1] <= sp[0] {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString(Mask)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
