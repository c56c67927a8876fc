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
			fmt.Fprint(cmd.OutOrStdout(), versionText())
		},
	}
}

// versionText is what `ahp-opa version` and `ahp-opa --version` print.
func versionText() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("ahp-opa %s\nOPA %s\nAHP protocol %s\n", v, version.Version, ahp.Version)
}
