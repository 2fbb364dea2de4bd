package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
)

// Zones and resource pools: named groups of machines (zones/,
// resourcepools/). Both have an id, a name and a description, so one set
// of commands serves both.

type groupAPI struct {
	use, noun, short string
	// Method expressions of *client.Client, receiver first.
	list   func(*client.Client, context.Context) ([]client.Group, error)
	create func(*client.Client, context.Context, url.Values) (client.Group, error)
	remove func(*client.Client, context.Context, client.Group) error
}

var zoneAPI = groupAPI{
	use: "zones", noun: "zone", short: "Work with availability zones",
	list:   (*client.Client).ListZones,
	create: (*client.Client).CreateZone,
	remove: func(c *client.Client, ctx context.Context, g client.Group) error { return c.DeleteZone(ctx, g.Name) },
}

var poolAPI = groupAPI{
	use: "pools", noun: "resource pool", short: "Work with resource pools",
	list:   (*client.Client).ListPools,
	create: (*client.Client).CreatePool,
	remove: func(c *client.Client, ctx context.Context, g client.Group) error { return c.DeletePool(ctx, g.ID) },
}

func zonesCmd(o *options) *cobra.Command { return groupCmd(o, zoneAPI) }
func poolsCmd(o *options) *cobra.Command { return groupCmd(o, poolAPI) }

func groupCmd(o *options, g groupAPI) *cobra.Command {
	cmd := &cobra.Command{Use: g.use, Short: g.short}
	listed := func(cmd *cobra.Command) (*client.Client, []client.Group, error) {
		c, err := o.client()
		if err != nil {
			return nil, nil, err
		}
		gs, err := g.list(c, cmd.Context())
		return c, gs, err
	}
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List " + g.noun + "s", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, gs, err := listed(cmd)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(gs, func(g client.Group) json.RawMessage { return g.Raw }))
			}
			rows := make([][]string, len(gs))
			for i, x := range gs {
				rows[i] = []string{strconv.FormatInt(x.ID, 10), x.Name, x.Description}
			}
			printTable(cmd.OutOrStdout(), "", []string{"ID", "NAME", "DESCRIPTION"}, rows)
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")

	var description string
	create := &cobra.Command{
		Use: "create NAME", Short: "Add a " + g.noun, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			x, err := g.create(c, cmd.Context(), setNonEmpty(url.Values{"name": {args[0]}}, "description", description))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created %s %s (id %d).\n", g.noun, clean(x.Name), x.ID)
			return nil
		},
	}
	create.Flags().StringVar(&description, "description", "", "what the "+g.noun+" is for")

	remove := &cobra.Command{
		Use: "delete NAME|ID", Short: "Delete a " + g.noun, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, gs, err := listed(cmd)
			if err != nil {
				return err
			}
			x, ok := findGroup(gs, args[0])
			if !ok {
				return fmt.Errorf("no %s %q (anvil %s list shows them)", g.noun, args[0], g.use)
			}
			if err := g.remove(c, cmd.Context(), x); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s %s.\n", g.noun, clean(x.Name))
			return nil
		},
	}
	cmd.AddCommand(list, create, remove)
	return cmd
}

// findGroup finds a group by name, else by id.
func findGroup(gs []client.Group, ref string) (client.Group, bool) {
	for _, g := range gs {
		if g.Name == ref {
			return g, true
		}
	}
	for _, g := range gs {
		if strconv.FormatInt(g.ID, 10) == ref {
			return g, true
		}
	}
	return client.Group{}, false
}

func tagsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "tags", Short: "Work with machine tags"}
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List tags", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ts, err := c.ListTags(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSONList(cmd.OutOrStdout(), raws(ts, func(t client.Tag) json.RawMessage { return t.Raw }))
			}
			rows := make([][]string, len(ts))
			for i, t := range ts {
				rows[i] = []string{t.Name, t.Comment, t.KernelOpts}
			}
			printTable(cmd.OutOrStdout(), "", []string{"NAME", "COMMENT", "KERNEL_OPTS"}, rows)
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")

	var comment, kernelOpts string
	create := &cobra.Command{
		Use: "create NAME", Short: "Add a tag (then tag machines with anvil tags add)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			f := setNonEmpty(url.Values{"name": {args[0]}}, "comment", comment)
			t, err := c.CreateTag(cmd.Context(), setNonEmpty(f, "kernel_opts", kernelOpts))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Created tag %s.\n", clean(t.Name))
			return nil
		},
	}
	create.Flags().StringVar(&comment, "comment", "", "what the tag means")
	create.Flags().StringVar(&kernelOpts, "kernel-opts", "", "kernel command-line options for machines with the tag")

	remove := &cobra.Command{
		Use: "delete NAME", Short: "Delete a tag", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			if err := c.DeleteTag(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted tag %s.\n", clean(args[0]))
			return nil
		},
	}
	cmd.AddCommand(list, create, remove, tagMachinesCmd(o, true), tagMachinesCmd(o, false))
	return cmd
}

// tagMachinesCmd is "tags add" (add true) or "tags remove": the tag given
// to, or taken from, machines named by system id or hostname.
func tagMachinesCmd(o *options, add bool) *cobra.Command {
	use, short, done := "remove TAG ID...", "Take a tag from machines", "Untagged"
	if add {
		use, short, done = "add TAG ID...", "Tag machines", "Tagged"
	}
	return &cobra.Command{
		Use: use, Short: short + " (by system id or hostname)", Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var ids, names []string
			for _, ref := range args[1:] {
				m, err := resolveMachine(cmd.Context(), c, ref)
				if err != nil {
					return err
				}
				ids = append(ids, m.SystemID)
				names = append(names, clean(m.Hostname)+" ("+clean(m.SystemID)+")")
			}
			var addIDs, removeIDs []string
			if add {
				addIDs = ids
			} else {
				removeIDs = ids
			}
			if _, _, err := c.UpdateTagNodes(cmd.Context(), args[0], addIDs, removeIDs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s.\n", done, clean(args[0]), strings.Join(names, ", "))
			return nil
		},
	}
}

// resolveMachine finds the machine a system id or hostname names.
func resolveMachine(ctx context.Context, c *client.Client, ref string) (client.Machine, error) {
	var m client.Machine
	_, err := withMachine(ctx, c, ref, func(id string) (err error) {
		m, err = c.GetMachine(ctx, id)
		return err
	})
	return m, err
}
