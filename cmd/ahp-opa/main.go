// Command ahp-opa is an Agent Hooks Protocol backend that decides tool calls
// with Rego policies.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError ends the process with a status and no further message: what
// had to be said was already written.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	root := &cobra.Command{
		Use:           "ahp-opa",
		Short:         "Agent Hooks Protocol backend that decides tool calls with Rego",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), evalCommand(), replayCommand(), registrationCommand(), testCommand(), versionCommand(), hookCommand(), installCommand(), daemonCommand())
	if err := root.Execute(); err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "ahp-opa:", err)
		os.Exit(1)
	}
}
