package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

// The subnets and IP ranges DHCP serves (subnets/, ipranges/).

func subnetsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "subnets", Short: "Work with subnets (DHCP serves those with --dhcp)"}
	cmd.AddCommand(subnetsListCmd(o), subnetCreateCmd(o), subnetDeleteCmd(o))
	return cmd
}

func subnetsListCmd(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List subnets", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ss, err := c.ListSubnets(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(ss, func(s client.Subnet) json.RawMessage { return s.Raw }))
			}
			rows := make([][]string, len(ss))
			for i, s := range ss {
				rows[i] = []string{strconv.FormatInt(s.ID, 10), s.Name, s.CIDR, deref(s.GatewayIP), strings.Join(s.DNSServers, ","), onOff(s.DHCPOn)}
			}
			printTable(cmd.OutOrStdout(), "", []string{"ID", "NAME", "CIDR", "GATEWAY", "DNS", "DHCP"}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func subnetCreateCmd(o *options) *cobra.Command {
	var (
		name, gateway, domain string
		dns                   []string
		dhcp                  bool
		lease                 int
	)
	cmd := &cobra.Command{
		Use: "create CIDR", Short: "Add a subnet, e.g. 192.0.2.0/24 --gateway 192.0.2.1 --dhcp", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			f := url.Values{"cidr": {args[0]}}
			setNonEmpty(f, "name", name)
			setNonEmpty(f, "gateway_ip", gateway)
			setNonEmpty(f, "domain", domain)
			setNonEmpty(f, "dns_servers", strings.Join(dns, ","))
			if dhcp {
				f.Set("dhcp_on", "true")
			}
			if lease > 0 {
				f.Set("lease_seconds", strconv.Itoa(lease))
			}
			s, err := c.CreateSubnet(cmd.Context(), f)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Subnet %d: %s (%s), DHCP %s.\n", s.ID, s.CIDR, clean(s.Name), onOff(s.DHCPOn))
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name (default: the CIDR)")
	cmd.Flags().StringVar(&gateway, "gateway", "", "default gateway handed out by DHCP")
	cmd.Flags().StringSliceVar(&dns, "dns", nil, "DNS servers handed out by DHCP")
	cmd.Flags().StringVar(&domain, "domain", "", "DNS search domain handed out by DHCP")
	cmd.Flags().BoolVar(&dhcp, "dhcp", false, "serve DHCP on it (from a rack with --dhcp-interface on this network)")
	cmd.Flags().IntVar(&lease, "lease-seconds", 0, "DHCP lease time (default: the server's, an hour)")
	return cmd
}

func subnetDeleteCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "delete ID|CIDR|NAME", Short: "Delete a subnet", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			s, err := findSubnet(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			if err := c.DeleteSubnet(cmd.Context(), s.ID); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted subnet %d (%s).\n", s.ID, s.CIDR)
			return nil
		},
	}
}

// findSubnet finds a subnet by id, CIDR or name.
func findSubnet(ctx context.Context, c *client.Client, ref string) (client.Subnet, error) {
	ss, err := c.ListSubnets(ctx)
	if err != nil {
		return client.Subnet{}, err
	}
	for _, s := range ss {
		if strconv.FormatInt(s.ID, 10) == ref || s.CIDR == ref || s.Name == ref {
			return s, nil
		}
	}
	return client.Subnet{}, fmt.Errorf("no subnet %q (give its id, CIDR or name; anvil subnets list shows them)", ref)
}

func ipRangesCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "ipranges", Short: "Work with a subnet's dynamic (DHCP pool) and reserved IP ranges"}
	cmd.AddCommand(ipRangesListCmd(o), ipRangeCreateCmd(o), ipRangeDeleteCmd(o))
	return cmd
}

func ipRangesListCmd(o *options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List IP ranges", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			rs, err := c.ListIPRanges(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(rs, func(r client.IPRange) json.RawMessage { return r.Raw }))
			}
			cidrs := map[int64]string{}
			if ss, err := c.ListSubnets(cmd.Context()); err == nil {
				for _, s := range ss {
					cidrs[s.ID] = s.CIDR
				}
			}
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
			rows := make([][]string, len(rs))
			for i, r := range rs {
				rows[i] = []string{strconv.FormatInt(r.ID, 10), r.Type, r.StartIP, r.EndIP, cmp.Or(cidrs[r.Subnet], strconv.FormatInt(r.Subnet, 10)), r.Comment}
			}
			printTable(cmd.OutOrStdout(), "", []string{"ID", "TYPE", "START", "END", "SUBNET", "COMMENT"}, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	return cmd
}

func ipRangeCreateCmd(o *options) *cobra.Command {
	var typ, subnet, comment string
	cmd := &cobra.Command{
		Use: "create START END", Short: "Add a range, e.g. 192.0.2.100 192.0.2.199 (dynamic: DHCP hands these out)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			f := url.Values{"type": {typ}, "start_ip": {args[0]}, "end_ip": {args[1]}}
			setNonEmpty(f, "comment", comment)
			if subnet != "" {
				s, err := findSubnet(cmd.Context(), c, subnet)
				if err != nil {
					return err
				}
				f.Set("subnet", strconv.FormatInt(s.ID, 10))
			}
			r, err := c.CreateIPRange(cmd.Context(), f)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "IP range %d: %s %s-%s in subnet %d.\n", r.ID, r.Type, r.StartIP, r.EndIP, r.Subnet)
			return nil
		},
	}
	cmd.Flags().StringVar(&typ, "type", "dynamic", "dynamic (handed out by DHCP) or reserved (never handed out)")
	cmd.Flags().StringVar(&subnet, "subnet", "", "the subnet's id, CIDR or name (default: the one holding START)")
	cmd.Flags().StringVar(&comment, "comment", "", "what the range is for")
	return cmd
}

func ipRangeDeleteCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "delete ID", Short: "Delete an IP range", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a range id (anvil ipranges list shows them)", args[0])
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			if err := c.DeleteIPRange(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted IP range %d.\n", id)
			return nil
		},
	}
}

func raws[T any](vs []T, raw func(T) json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = raw(v)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
