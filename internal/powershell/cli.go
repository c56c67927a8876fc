package powershell

import "strings"

// hostValues are the parameters of pwsh and powershell.exe that take a
// value, by their shortest accepted abbreviation.
var hostValues = []string{
	"executionpolicy", "ex", "ep", "windowstyle", "w", "inputformat", "if", "outputformat", "of", "o",
	"configurationname", "config", "workingdirectory", "wd", "version", "v", "settingsfile", "psconsolefile",
	"custompipename", "encodedarguments", "ea",
}

// Script returns the PowerShell code a pwsh or powershell.exe command line
// runs: the text after -Command (-c), or the decoded -EncodedCommand
// (-e, -ec, -enc). Windows PowerShell (legacy set) runs its first operand
// as a command too; pwsh runs it as a script file. stdin is set for
// -Command - and for no command at all, when the code is read from
// standard input; ok is false when there is no code to read (-File,
// -Version).
func Script(args []string, legacy bool) (code string, stdin, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' && a[0] != '/' {
			if legacy {
				return strings.Join(args[i:], " "), false, true
			}
			return "", false, false // pwsh FILE
		}
		raw, value, hasValue := strings.Cut(strings.TrimLeft(a, "-/"), ":")
		name := strings.ToLower(raw)
		switch {
		case name == "c" || name != "" && strings.HasPrefix("command", name) && len(name) >= 2:
			if hasValue {
				return value, false, true
			}
			if i+1 >= len(args) {
				return "", true, true
			}
			if args[i+1] == "-" {
				return "", true, true
			}
			return strings.Join(args[i+1:], " "), false, true
		case name == "e" || name == "ec" || strings.HasPrefix("encodedcommand", name) && len(name) >= 3:
			v := value
			if !hasValue {
				if i+1 >= len(args) {
					return "", false, false
				}
				v = args[i+1]
			}
			s, ok := Decode(v)
			return s, false, ok
		case name == "f" || strings.HasPrefix("file", name) && len(name) >= 2:
			return "", false, false
		case contains(hostValues, name) && !hasValue:
			i++
		}
	}
	return "", true, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
