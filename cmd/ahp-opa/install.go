package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/internal/adapters"
	"github.com/ahp-opa/ahp-opa/internal/install"
)

func installCommand() *cobra.Command {
	var (
		scope, project, hookCmd string
		dryRun, uninstall       bool
		observe                 bool
		agentTimeout            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "install AGENT [--scope user|project] [--observe] [--dry-run] [--uninstall]",
		Short: "Register ahp-opa's hook in an agent's settings file",
		Long: `Install merges ahp-opa's pre-tool hook into the agent's own settings file
(` + strings.Join(adapters.Names, ", ") + `): one entry per event
however often it runs, the agent's fail-closed switch on where it has one, a
backup of the file before any change. --uninstall removes every ahp-opa
entry and only those. --dry-run prints the diff and writes nothing. A
settings file that does not parse is left as it is.

--observe also registers the post-tool hooks (and their failure variant
where the agent has one) and the session start and end hooks, so that tool
results and sessions reach the audit log. Each is one more process per tool
call or session boundary, so it is off by default; these hooks run with
--fail-open and without the fail-closed switch, so they never block the
agent. Installing without --observe removes them again.

The timeout registered with the agent is the hook command's own deadline
(its --timeout; ahp-opa-hook's default is 9s) plus 1s, and at least 10s, so
the hook always answers, with a deny if need be, before the agent gives up
on it: Codex, Gemini CLI and Copilot run a call whose hook they killed.
--agent-timeout sets it; one not above the hook's deadline draws a warning.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := os.UserHomeDir()
			if err != nil && scope != string(install.Project) {
				return err
			}
			if project == "" {
				if project, err = os.Getwd(); err != nil {
					return err
				}
			}
			if hookCmd == "" {
				hookCmd = defaultHookCommand()
			}
			res, err := install.Apply(install.Options{
				Agent: args[0], Scope: install.Scope(scope), Home: home, Project: project,
				Command: hookCmd, AgentTimeout: agentTimeout, Observe: observe, Uninstall: uninstall, DryRun: dryRun,
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case !res.Changed && uninstall:
				fmt.Fprintf(w, "%s: no ahp-opa hook to remove\n", res.Path)
			case !res.Changed:
				fmt.Fprintf(w, "%s: already installed (%s)\n", res.Path, strings.Join(res.Events, ", "))
			case dryRun:
				fmt.Fprint(w, res.Diff)
				fmt.Fprintln(w, "(dry run: nothing written)")
			default:
				verb := "installed in"
				if uninstall {
					verb = "removed from"
				}
				fmt.Fprintf(w, "ahp-opa hook %s %s\n", verb, res.Path)
				if len(res.Events) > 0 {
					fmt.Fprintf(w, "events: %s\n", strings.Join(res.Events, ", "))
				}
				if res.Backup != "" {
					fmt.Fprintf(w, "backup: %s\n", res.Backup)
				}
			}
			for _, n := range res.Notes {
				if strings.HasPrefix(n, "warning: ") {
					fmt.Fprintln(cmd.ErrOrStderr(), n)
					continue
				}
				fmt.Fprintf(w, "note: %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "user", "user (your home) or project (the project directory)")
	cmd.Flags().StringVar(&project, "project", "", "project `dir` for --scope project (default: the working directory)")
	cmd.Flags().StringVar(&hookCmd, "hook-cmd", "", "hook command without the agent name (default: ahp-opa-hook next to this binary, else on PATH, else 'ahp-opa hook')")
	cmd.Flags().DurationVar(&agentTimeout, "agent-timeout", 0, "timeout registered with the agent (default: the hook's own --timeout plus 1s, at least 10s)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the diff, write nothing")
	cmd.Flags().BoolVar(&observe, "observe", false, "also register the post-tool and session start/end hooks, for the audit log (one more hook process per tool call; they never block)")
	cmd.Flags().BoolVar(&uninstall, "uninstall", false, "remove every ahp-opa entry")
	return cmd
}

// defaultHookCommand prefers the small hook binary, by absolute path so
// the agent's PATH does not matter.
func defaultHookCommand() string {
	if self, err := os.Executable(); err == nil {
		if self, err = filepath.EvalSymlinks(self); err == nil {
			next := filepath.Join(filepath.Dir(self), "ahp-opa-hook")
			if _, err := os.Stat(next); err == nil {
				return install.QuoteCommand(next)
			}
			if p, err := exec.LookPath("ahp-opa-hook"); err == nil {
				if a, err := filepath.Abs(p); err == nil {
					return install.QuoteCommand(a)
				}
			}
			return install.QuoteCommand(self) + " hook"
		}
	}
	return "ahp-opa-hook"
}
