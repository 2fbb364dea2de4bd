// Command anvil provisions bare-metal servers. Each subcommand parses its
// flags and hands over to a package under internal/.
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "anvil",
		Short:         "Anvil provisions bare-metal servers and speaks MAAS's API",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(serveCmd(), apikeyCmd())
	root.AddCommand(clientCommands()...)
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
