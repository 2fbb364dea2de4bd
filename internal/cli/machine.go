package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

func machineCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "machine",
		Short: "Work with one machine (by system id or hostname)",
	}
	cmd.AddCommand(machineShowCmd(o), machineAddCmd(o), machineDeleteCmd(o), machineAcceptCmd(o))
	cmd.AddCommand(actionCmds(o)...)
	return cmd
}

func machineShowCmd(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a machine's details and interfaces",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			m, err := resolveMachine(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), m.Raw)
			}
			printMachine(cmd.OutOrStdout(), m)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func printMachine(w io.Writer, m client.Machine) {
	status := m.StatusName
	if m.StatusMessage != "" && m.StatusMessage != m.StatusName {
		status += " (" + m.StatusMessage + ")"
	}
	osys := strings.Trim(m.OSystem+"/"+m.DistroSeries, "/")
	storage := "-"
	if m.Storage > 0 {
		storage = strconv.FormatFloat(m.Storage/1000, 'f', 1, 64) + " GB"
	}
	printTable(w, "", nil, [][]string{
		{"Hostname:", m.Hostname},
		{"FQDN:", m.FQDN},
		{"System ID:", m.SystemID},
		{"Status:", status},
		{"Power:", m.PowerState + " (" + clean(m.PowerType) + ")"},
		{"Owner:", m.Owner},
		{"Zone:", m.Zone.Name},
		{"Pool:", m.Pool.Name},
		{"Architecture:", m.Architecture},
		{"CPUs:", strconv.Itoa(m.CPUCount)},
		{"Memory:", gib(m.Memory)},
		{"Storage:", storage},
		{"OS:", osys},
		{"Tags:", strings.Join(m.TagNames, ", ")},
		{"IP addresses:", strings.Join(m.IPAddresses, ", ")},
		{"Hardware UUID:", m.HardwareUUID},
		{"Netboot:", strconv.FormatBool(m.Netboot)},
		{"Description:", m.Description},
	})
	fmt.Fprintln(w, "Interfaces:")
	boot := ""
	if m.BootInterface != nil {
		boot = m.BootInterface.MACAddress
	}
	rows := make([][]string, len(m.Interfaces))
	for i, nic := range m.Interfaces {
		var addrs []string
		for _, l := range nic.Links {
			switch {
			case l.IPAddress != "":
				addrs = append(addrs, l.IPAddress)
			case l.Subnet != nil:
				addrs = append(addrs, l.Mode+" on "+l.Subnet.CIDR)
			default:
				addrs = append(addrs, l.Mode)
			}
		}
		isBoot := ""
		if nic.MACAddress != "" && nic.MACAddress == boot {
			isBoot = "yes"
		}
		rows[i] = []string{nic.Name, nic.MACAddress, nic.Type, strconv.FormatBool(nic.Enabled), isBoot, strings.Join(addrs, ", ")}
	}
	printTable(w, "  ", []string{"NAME", "MAC", "TYPE", "ENABLED", "BOOT", "ADDRESSES"}, rows)
}

func machineAddCmd(o *options) *cobra.Command {
	var hostname, arch, powerType, zone, pool, description string
	var macs, powerParams []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "add",
		Short:   "Enlist a machine",
		Example: "  anvil machine add --hostname web01 --arch amd64 --mac 52:54:00:12:34:56 \\\n    --power-type ipmi --power-param power_address=10.0.0.50 --power-param power_user=admin",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			form := url.Values{}
			for flag, v := range map[string]string{
				"hostname": hostname, "architecture": arch, "power_type": powerType,
				"zone": zone, "pool": pool, "description": description,
			} {
				if v != "" {
					form.Set(flag, v)
				}
			}
			for _, mac := range macs {
				form.Add("mac_addresses", mac)
			}
			for _, kv := range powerParams {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("--power-param %q: want key=value", kv)
				}
				form.Set("power_parameters_"+k, v)
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			m, err := c.CreateMachine(cmd.Context(), form)
			if err != nil {
				return err
			}
			return printResult(cmd, m, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&hostname, "hostname", "", "hostname (the server picks one if empty)")
	f.StringVar(&arch, "arch", "", "architecture, e.g. amd64 or amd64/generic")
	f.StringSliceVar(&macs, "mac", nil, "MAC address of an interface; repeat for more (the first boots)")
	f.StringVar(&powerType, "power-type", "", "power driver: manual, ipmi, redfish, ...")
	// StringArray, not StringSlice: a parameter value may contain commas.
	f.StringArrayVar(&powerParams, "power-param", nil, "power parameter key=value; repeat for more")
	f.StringVar(&zone, "zone", "", "zone")
	f.StringVar(&pool, "pool", "", "resource pool")
	f.StringVar(&description, "description", "", "free-text description")
	f.BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func machineDeleteCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a machine",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			id, err := withMachine(cmd.Context(), c, args[0], func(id string) error {
				return c.DeleteMachine(cmd.Context(), id)
			})
			if err != nil {
				return err
			}
			if id != args[0] {
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s (%s).\n", args[0], id)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s.\n", id)
			}
			return nil
		},
	}
}

// printResult prints a machine an action left behind: one line, or JSON.
func printResult(cmd *cobra.Command, m client.Machine, asJSON bool) error {
	if asJSON {
		return printJSON(cmd.OutOrStdout(), m.Raw)
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), summary(m))
	return err
}

// machineAcceptCmd takes the boot held for each machine (one its BMC added
// whose boot could not be corroborated) as that machine's.
func machineAcceptCmd(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "accept ID...",
		Short: "Accept the boot held for a machine its BMC added, so its next boot is its own",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ids := make([]string, len(args))
			for i, ref := range args {
				m, err := resolveMachine(cmd.Context(), c, ref)
				if err != nil {
					return err
				}
				ids[i] = m.SystemID
			}
			ms, err := c.AcceptMachines(cmd.Context(), ids)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(ms, func(m client.Machine) json.RawMessage { return m.Raw }))
			}
			for _, m := range ms {
				fmt.Fprintln(cmd.OutOrStdout(), summary(m))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON for the machines")
	return cmd
}
