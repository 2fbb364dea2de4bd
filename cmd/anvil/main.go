// Command anvil provisions bare-metal servers. Each subcommand parses its
// flags and hands over to a package under internal/.
package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/cli"
)

func main() {
	root := &cobra.Command{
		Use:          "anvil",
		Short:        "Anvil provisions bare-metal servers and speaks MAAS's API",
		SilenceUsage: true,
	}
	root.AddCommand(serveCmd(), apikeyCmd(), passwdCmd(), benchCmd(), labCmd(), rackCmd(), importLoadersCmd())
	root.AddCommand(clientCommands()...)
	os.Exit(cli.Run(context.Background(), root, os.Args[1:], os.Stdout, os.Stderr))
}
