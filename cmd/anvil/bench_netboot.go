package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchNetbootCmd() *cobra.Command {
	cfg := bench.NetbootConfig{Out: os.Stderr}
	c := &cobra.Command{
		Use:   "netboot",
		Short: "Compare Anvil's DHCP, TFTP and HTTP boot servers with Kea, dnsmasq, tftpd-hpa and nginx in private network namespaces (root)",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, ctx, stop, err := benchSetup(c)
			if err != nil {
				return err
			}
			defer stop()
			cfg.Binary = bin
			res, err := bench.RunNetboot(ctx, cfg)
			rates := make([]string, len(cfg.Rates))
			for i, r := range cfg.Rates {
				rates[i] = strconv.Itoa(r)
			}
			command := fmt.Sprintf("anvil bench netboot --rates %s --seconds %d --clients %d --file-mib %d",
				strings.Join(rates, ","), cfg.Seconds, cfg.Clients, cfg.FileMiB)
			c.Flags().Visit(func(f *pflag.Flag) {
				if !strings.Contains(command, "--"+f.Name+" ") {
					command += fmt.Sprintf(" --%s %s", f.Name, f.Value)
				}
			})
			// Print what was measured, also when a later step failed.
			if len(res.DHCP) > 0 {
				fmt.Fprint(c.OutOrStdout(), bench.NetbootMarkdown(res, command))
			}
			return err
		},
	}
	c.Flags().IntSliceVar(&cfg.Rates, "rates", []int{500, 1000, 2000, 4000}, "perfdhcp DORA exchanges per second to offer")
	c.Flags().IntVar(&cfg.Seconds, "seconds", 5, "perfdhcp test period per rate and server")
	c.Flags().IntVar(&cfg.Clients, "clients", 50000, "perfdhcp simulated clients (-R); the pool holds about 130,000")
	c.Flags().IntVar(&cfg.FileMiB, "file-mib", 64, "size of the TFTP and HTTP download")
	c.Flags().IntVar(&cfg.Reps, "reps", 3, "runs per download and GET-rate figure (the median is reported)")
	c.Flags().DurationVar(&cfg.LoadTime, "load-time", 2*time.Second, "duration of each 1 KiB GET-rate run")
	c.Flags().IntVar(&cfg.LoadConns, "load-conns", 4, "keep-alive connections of the GET-rate client")

	// The GET-rate client, run by the bench in the client namespace.
	var (
		url  string
		dur  time.Duration
		conc int
	)
	load := &cobra.Command{
		Use:    "http-load",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ok, failed := bench.HTTPLoad(c.Context(), url, dur, conc)
			fmt.Fprintln(c.OutOrStdout(), ok, failed)
			return nil
		},
	}
	load.Flags().StringVar(&url, "url", "", "URL to GET")
	load.Flags().DurationVar(&dur, "duration", 2*time.Second, "how long")
	load.Flags().IntVar(&conc, "concurrency", 4, "keep-alive connections")
	c.AddCommand(load)
	return c
}
