package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchDNSCmd() *cobra.Command {
	cfg := bench.DNSConfig{Out: os.Stderr}
	c := &cobra.Command{
		Use:   "dns",
		Short: "Compare the rack's DNS server with BIND 9 serving the same zone of many machines, queried by dnsperf on loopback, and the memory each holds",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, ctx, stop, err := benchSetup(c)
			if err != nil {
				return err
			}
			defer stop()
			cfg.Binary = bin
			res, err := bench.RunDNS(ctx, cfg)
			if len(res.Runs) > 0 {
				fmt.Fprint(c.OutOrStdout(), bench.DNSMarkdown(res))
			}
			return err
		},
	}
	c.Flags().IntVar(&cfg.Machines, "machines", 10000, "machines in the zone")
	c.Flags().DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long dnsperf queries each server")
	c.Flags().IntVar(&cfg.Clients, "clients", 4, "dnsperf's clients (sockets)")
	c.Flags().IntVar(&cfg.Rounds, "rounds", 3, "times each server is measured, taking turns")

	var machines int
	var listen string
	serve := &cobra.Command{
		Use:    "serve-zone",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return bench.ServeDNSZone(ctx, machines, listen, c.OutOrStdout())
		},
	}
	serve.Flags().IntVar(&machines, "machines", 10000, "machines in the zone")
	serve.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address")
	c.AddCommand(serve)
	return c
}
