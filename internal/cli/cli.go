// Package cli is Anvil's command-line client: cobra commands that talk to a
// server through internal/client, in the manner of the maas CLI. It holds no
// provisioning logic; everything it shows comes from the API.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

// options are the flags every client command shares. Each Commands() call
// gets its own, so that tests running several commands do not share state.
type options struct {
	configPath string // --config; "" means ConfigPath()'s default
	profile    string // --profile; "" means the default profile
}

// Commands returns the client commands (login, logout, machines, machine,
// events, subnets, ipranges, images, tags, zones, pools, settings) for the caller to add to its root command. Run that root with Run
// to get the CLI's error convention.
func Commands() []*cobra.Command {
	o := &options{}
	cmds := []*cobra.Command{
		loginCmd(o), logoutCmd(o), machinesCmd(o), machineCmd(o), eventsCmd(o), subnetsCmd(o), ipRangesCmd(o),
		imagesCmd(o), tagsCmd(o), zonesCmd(o), poolsCmd(o), settingsCmd(o),
	}
	for _, c := range cmds {
		c.PersistentFlags().StringVar(&o.configPath, "config", "",
			"profiles file (default $ANVIL_CONFIG, else $XDG_CONFIG_HOME/anvil/profiles.json, else ~/.config/anvil/profiles.json)")
		if c.Name() != "login" && c.Name() != "logout" {
			c.PersistentFlags().StringVar(&o.profile, "profile", "", "profile to use (default: the default profile)")
		}
		silenceUsage(c)
	}
	return cmds
}

// silenceUsage stops cobra from dumping usage on every error: an API error
// is not a usage mistake, and the message alone says what went wrong.
func silenceUsage(c *cobra.Command) {
	c.SilenceUsage = true
	for _, sub := range c.Commands() {
		silenceUsage(sub)
	}
}

// Execute runs the CLI with args (without the program name) under a root
// named "anvil" holding Commands(), writing to stdout and stderr, and returns
// the process exit code. Tests and end-to-end checks use it with --config.
func Execute(args []string, stdout, stderr io.Writer) int {
	return ExecuteContext(context.Background(), args, stdout, stderr)
}

// ExecuteContext is Execute with a context; cancelling it ends a running
// command (events --follow ends cleanly, with exit code 0).
func ExecuteContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "anvil",
		Short:         "Anvil command-line client",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(Commands()...)
	return Run(ctx, root, args, stdout, stderr)
}

// Run executes root with args and returns the exit code: 0, or 1 after
// printing "error: <message>" to stderr. cmd/anvil can run its own root
// (serve, apikey and Commands()) through it so every command fails alike.
func Run(ctx context.Context, root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceErrors = true // we print errors ourselves, in one format
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

// client returns an API client for the selected profile.
func (o *options) client() (*client.Client, error) {
	path, err := o.path()
	if err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	name, p, err := cfg.Select(o.profile)
	if err != nil {
		return nil, err
	}
	c, err := client.New(p.URL, p.APIKey)
	if err == nil {
		err = c.TrustCAFile(p.CAFile)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %q in %s: %w", name, path, err)
	}
	c.UserAgent = "anvil-cli"
	return c, nil
}

// path returns the profiles file this invocation uses.
func (o *options) path() (string, error) {
	if o.configPath != "" {
		return o.configPath, nil
	}
	return ConfigPath()
}
