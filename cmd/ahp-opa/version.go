package main

import (
	"fmt"
	"runtime/debug"

	"github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"

	"github.com/ahp-opa/ahp-opa/transport/ahp"
)

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of ahp-opa, OPA and the protocol",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "ahp-opa %s\n", v)
			fmt.Fprintf(w, "OPA %s\n", version.Version)
			fmt.Fprintf(w, "AHP protocol %s\n", ahp.Version)
		},
	}
}
