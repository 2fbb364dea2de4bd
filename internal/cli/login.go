package cli

import (
	"bufio"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

func loginCmd(o *options) *cobra.Command {
	var (
		makeDefault bool
		caFile      string
	)
	cmd := &cobra.Command{
		Use:   "login PROFILE URL KEY",
		Short: "Check an API key against a server and save it as a profile",
		Long: "Check an API key against a server and save it as a profile.\n\n" +
			"KEY is the API key, consumer:token:secret; pass - to read it from standard input\n" +
			"and keep it out of the shell history. The first profile becomes the default.",
		Example: "  anvil login lab http://10.0.0.2:5240/MAAS/ consumer:token:secret\n  anvil login lab 10.0.0.2:5240 - < key.txt",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, rawURL, key := args[0], args[1], args[2]
			if name == "" || strings.TrimSpace(name) != name {
				return fmt.Errorf("profile name %q: must be non-empty, without surrounding spaces", name)
			}
			if key == "-" {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return errors.New("reading the API key from standard input: nothing there")
				}
				key = strings.TrimSpace(line)
			}
			c, err := client.New(rawURL, key)
			if err != nil {
				return err
			}
			if caFile != "" {
				if caFile, err = filepath.Abs(caFile); err != nil {
					return err
				}
			}
			if err := c.TrustCAFile(caFile); err != nil {
				return err
			}
			c.UserAgent = "anvil-cli"
			user, err := c.WhoAmI(cmd.Context())
			if err != nil {
				return fmt.Errorf("checking the key with %s: %w", c.BaseURL(), err)
			}
			path, err := o.path()
			if err != nil {
				return err
			}
			cfg, err := LoadConfig(path)
			if err != nil {
				return err
			}
			cfg.Profiles[name] = Profile{URL: c.BaseURL(), APIKey: key, CAFile: caFile}
			if cfg.Default == "" || makeDefault {
				cfg.Default = name
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			note := ""
			if cfg.Default == name {
				note = " (default)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s as %s; saved profile %s%s.\n",
				c.BaseURL(), user.Username, name, note)
			return nil
		},
	}
	cmd.Flags().BoolVar(&makeDefault, "default", false, "make this the default profile")
	cmd.Flags().StringVar(&caFile, "ca-file", "", "PEM certificate(s) to trust for an https URL, e.g. the region's self-signed certificate (kept in the profile)")
	return cmd
}

func logoutCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "logout PROFILE",
		Short: "Forget a profile and its API key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			path, err := o.path()
			if err != nil {
				return err
			}
			cfg, err := LoadConfig(path)
			if err != nil {
				return err
			}
			if _, ok := cfg.Profiles[name]; !ok {
				return fmt.Errorf("no profile %q in %s", name, path)
			}
			delete(cfg.Profiles, name)
			msg := fmt.Sprintf("Removed profile %s.", name)
			if cfg.Default == name {
				// Picking another default silently could aim the next
				// command at a different server than the user expects.
				cfg.Default = ""
				if len(cfg.Profiles) > 0 {
					msg += fmt.Sprintf(" There is no default profile now; pass --profile (one of %s).", cfg.names())
				}
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}
