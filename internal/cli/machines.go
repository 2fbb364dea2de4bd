package cli

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

func machinesCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machines",
		Short: "Work with the machine collection",
	}
	cmd.AddCommand(machinesListCmd(o))
	return cmd
}

func machinesListCmd(o *options) *cobra.Command {
	var asJSON bool
	// Flag → MAAS read filter. Values pass through as repeated parameters;
	// the server does the matching.
	filters := []struct{ flag, param, help string }{
		{"hostname", "hostname", "only machines with this hostname"},
		{"status", "status", "only machines in this status (ready, deployed, failed_deployment, ...)"},
		{"zone", "zone", "only machines in this zone"},
		{"pool", "pool", "only machines in this resource pool"},
		{"mac", "mac_address", "only machines with an interface with this MAC address"},
	}
	values := make([][]string, len(filters))
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List machines",
		Long:    "List machines. Each filter may be repeated or given a comma-separated list; a machine matching any value passes.",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			for i, f := range filters {
				for _, v := range values[i] {
					q.Add(f.param, v)
				}
			}
			ms, err := c.ListMachines(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				raws := make([]json.RawMessage, len(ms))
				for i, m := range ms {
					raws[i] = m.Raw
				}
				return printJSONList(cmd.OutOrStdout(), raws)
			}
			printMachines(cmd, ms)
			return nil
		},
	}
	for i, f := range filters {
		cmd.Flags().StringSliceVar(&values[i], f.flag, nil, f.help)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func printMachines(cmd *cobra.Command, ms []client.Machine) {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Hostname < ms[j].Hostname })
	rows := make([][]string, len(ms))
	for i, m := range ms {
		rows[i] = []string{
			m.Hostname, m.SystemID, m.StatusName, m.PowerState, m.Owner, m.Zone.Name, m.Pool.Name,
			m.Architecture, strconv.Itoa(m.CPUCount), gib(m.Memory), strings.Join(m.TagNames, ","),
		}
	}
	printTable(cmd.OutOrStdout(), "", []string{
		"HOSTNAME", "SYSTEM_ID", "STATUS", "POWER", "OWNER", "ZONE", "POOL", "ARCH", "CPUS", "MEMORY", "TAGS",
	}, rows)
}
