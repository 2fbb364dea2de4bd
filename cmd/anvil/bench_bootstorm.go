package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchBootstormCmd() *cobra.Command {
	cfg := bench.BootstormConfig{Out: os.Stderr}
	var kernel, initrd string
	c := &cobra.Command{
		Use:   "bootstorm",
		Short: "Boot many simulated machines at once against `anvil serve` in a network namespace (DHCP, iPXE config, kernel and initrd over HTTP, Hello and Enlist) and time until all are NEW",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, ctx, stop, err := benchSetup(c)
			if err != nil {
				return err
			}
			defer stop()
			cfg.Binary = bin
			if cfg.DBURL == "sqlite" {
				cfg.DBURL = ""
			}
			if cfg.KernelBytes, err = bench.ParseSize(kernel); err != nil {
				return err
			}
			if cfg.InitrdBytes, err = bench.ParseSize(initrd); err != nil {
				return err
			}
			res, err := bench.RunBootstorm(ctx, cfg)
			if len(res.Results) > 0 {
				fmt.Fprint(c.OutOrStdout(), bench.BootstormMarkdown(res))
			}
			return err
		},
	}
	c.Flags().IntVar(&cfg.Machines, "machines", 1000, "simulated machines booting at once")
	c.Flags().StringVar(&cfg.DBURL, "db", "sqlite", "sqlite or a postgres:// URL whose role may create databases")
	c.Flags().StringVar(&kernel, "kernel-size", "1MiB", "size of the ephemeral kernel the rack serves")
	c.Flags().StringVar(&initrd, "initrd-size", "1MiB", "size of the ephemeral initrd the rack serves")
	c.Flags().Float64Var(&cfg.DropDHCP, "drop-dhcp", 0, "share of machines (0..1) whose first DHCP packet is lost")
	c.Flags().Float64Var(&cfg.Silent, "silent", 0, "share of machines whose agent stops reporting (commissioning never signals OK)")
	c.Flags().BoolVar(&cfg.EnlistCommission, "enlist-commission", false, "run the server with --enlist-commission: enlisted machines go on to commissioning")
	c.Flags().DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "give up on the storm after this long")
	return c
}
