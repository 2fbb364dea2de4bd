package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/settings"
)

// Settings are the server's run-time configuration under MAAS's names
// (maas/?op=get_config, set_config). The server parses and refuses
// values; the CLI only shows what it answers.

func settingsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "settings", Short: "Read and change the server's settings (MAAS's config names)"}
	var asJSON bool
	get := &cobra.Command{
		Use:   "get [NAME]",
		Short: "Show one setting, or all of them",
		Long: "Show one setting's value as the server answers it (text bare, anything else as JSON), or, with no NAME,\n" +
			"a table of every setting this version of Anvil has.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				v, err := c.GetConfig(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), v)
				}
				_, err = fmt.Fprintln(cmd.OutOrStdout(), settingText(v))
				return err
			}
			return printSettings(cmd, c, asJSON)
		},
	}
	get.Flags().BoolVar(&asJSON, "json", false, "print the value (or, with no NAME, an object of all values) as JSON")

	set := &cobra.Command{
		Use:   "set NAME VALUE",
		Short: "Change a setting",
		Long:  "Change a setting; the server checks the value and refuses one it cannot take, or a name it does not have.",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			if err := c.SetConfig(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			if it, ok := settings.Lookup(args[0]); ok && it.Secret {
				fmt.Fprintf(cmd.OutOrStdout(), "Set %s.\n", args[0])
				return nil
			}
			// Show the value as the server now has it ("5m" reads back as 300).
			v, err := c.GetConfig(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s = %s\n", args[0], clean(settingText(v)))
			return nil
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}

// printSettings shows every setting Anvil has, read one by one. Secret
// values are not shown in the table (settings get NAME shows them to an
// administrator); names the server does not have (an older server) are
// left out.
func printSettings(cmd *cobra.Command, c *client.Client, asJSON bool) error {
	values := map[string]json.RawMessage{}
	var rows [][]string
	for _, it := range settings.All() {
		v, err := c.GetConfig(cmd.Context(), it.Name)
		var ae *client.APIError
		switch {
		case errors.As(err, &ae) && ae.Status == http.StatusBadRequest:
			continue
		case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
			rows = append(rows, []string{it.Name, "(administrators only)"})
			continue
		case err != nil:
			return err
		}
		text := settingText(v)
		if it.Secret {
			text = "(secret)"
			if string(v) == `""` || string(v) == "null" {
				text = "(not set)"
			}
		} else {
			values[it.Name] = v
		}
		rows = append(rows, []string{it.Name, text})
	}
	if asJSON {
		b, err := json.Marshal(values)
		if err != nil {
			return err
		}
		return printJSON(cmd.OutOrStdout(), b)
	}
	printTable(cmd.OutOrStdout(), "", []string{"NAME", "VALUE"}, rows)
	return nil
}

// settingText is a value as a person reads it: text bare, the rest
// (true, 30, null, lists) as compact JSON.
func settingText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	b, _ := json.Marshal(v) // compacts; v was checked valid when read
	return string(b)
}
