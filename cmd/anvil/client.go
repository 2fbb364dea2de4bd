package main

import (
	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/cli"
)

// clientCommands are the thin API client's commands (login, machines, ...).
func clientCommands() []*cobra.Command { return cli.Commands() }
