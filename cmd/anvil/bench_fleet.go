package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchFleetCmd() *cobra.Command {
	cfg := bench.FleetConfig{Out: os.Stderr}
	var (
		dbs     []string
		write   string
		section string
	)
	c := &cobra.Command{
		Use:   "fleet",
		Short: "Run a lab fleet of IPMI BMCs (some dead, some slow) under the power monitor of a fresh `anvil serve` while API clients load it: sweep time, BMC sessions counted by the BMCs, drift correction, API latency, region CPU and peak RSS",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, ctx, stop, err := benchSetup(c)
			if err != nil {
				return err
			}
			defer stop()
			cfg.Binary = bin
			if cfg.ProfileDir != "" {
				if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
					return err
				}
			}
			var rs []bench.FleetResult
			for _, db := range dbs {
				cfg.DBURL = db
				if db == "sqlite" {
					cfg.DBURL = ""
				}
				r, err := bench.RunFleet(ctx, cfg)
				if err != nil {
					return fmt.Errorf("fleet on %s: %w", r.Database, err)
				}
				fmt.Fprintf(os.Stderr, "fleet: %s run took %.0f s; profiles %v\n", r.Database, r.RunSeconds, r.Profiles)
				rs = append(rs, r)
			}
			table := bench.FleetMarkdown(rs)
			fmt.Fprint(c.OutOrStdout(), table)
			return writeBenchmarks(write, section, table)
		},
	}
	fl := c.Flags()
	fl.IntVar(&cfg.Machines, "machines", 10000, "simulated machines, each behind its own IPMI BMC on 127.0.0.1")
	fl.StringSliceVar(&dbs, "db", []string{"sqlite"}, "databases to run on: sqlite or a postgres:// URL whose role may create databases (repeat for several)")
	fl.IntVar(&cfg.Workers, "workers", 16, "the server's --power-workers (16 is its default)")
	fl.DurationVar(&cfg.Interval, "interval", 2*time.Second, "the server's --power-poll-interval; the default keeps every machine due, so the sweep shows what the limits allow")
	fl.Float64Var(&cfg.DeadShare, "dead-share", 0.01, "share of BMCs that never answer")
	fl.Float64Var(&cfg.SlowShare, "slow-share", 0.05, "share of BMCs that answer slowly")
	fl.DurationVar(&cfg.SlowDelay, "slow-delay", 200*time.Millisecond, "delay of each answer of a slow BMC (an RMCP+ query takes seven)")
	fl.IntVar(&cfg.DriftSample, "drift-sample", 100, "machines powered on through the API, then turned off behind Anvil's back")
	fl.DurationVar(&cfg.DriftGrace, "drift-grace", 10*time.Second, "the server's --drift-grace")
	fl.IntVar(&cfg.Clients, "clients", 32, "concurrent API clients during the load (an eighth list all, a quarter filter, three eighths read, a quarter power on/off)")
	fl.DurationVar(&cfg.LoadFor, "load", 30*time.Second, "how long the API clients run")
	fl.StringVar(&cfg.ProfileDir, "profile", "", "directory for the server's CPU profile (during the load) and heap profile (at the end)")
	writeFlag(c, &write, "fleet")
	fl.StringVar(&section, "section", "fleet", "the section --write-benchmarks rewrites (between <!-- bench:NAME --> and <!-- /bench:NAME -->)")
	return c
}
