package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "Measure Anvil (see BENCHMARKS.md)"}
	var (
		machines, samples, workers int
		dbs                        []string
		write                      string
	)
	api := &cobra.Command{
		Use:   "api",
		Short: "Fill a fresh server with machines through the API and measure list and read latency, create rate and peak RSS",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			var rs []bench.APIResult
			for _, db := range dbs {
				if db == "sqlite" {
					db = ""
				}
				r, err := bench.RunAPI(c.Context(), bench.APIConfig{
					Binary: bin, DBURL: db, Machines: machines, Samples: samples, Workers: workers, Out: os.Stderr,
				})
				if err != nil {
					return fmt.Errorf("bench on %q: %w", db, err)
				}
				rs = append(rs, r)
			}
			table := bench.Markdown(rs)
			fmt.Fprint(c.OutOrStdout(), table)
			return writeBenchmarks(write, "api", table)
		},
	}
	api.Flags().IntVar(&machines, "machines", 10000, "machines to create")
	api.Flags().IntVar(&samples, "samples", 500, "requests per latency figure (list-all uses a tenth)")
	api.Flags().IntVar(&workers, "workers", 8, "concurrent creators while filling")
	api.Flags().StringSliceVar(&dbs, "db", []string{"sqlite"}, "databases to compare: sqlite (embedded) or a postgres:// URL whose role may create databases (repeat the flag for several)")
	writeFlag(api, &write, "api")
	c.AddCommand(api, benchPowerCmd())
	c.AddCommand(benchNetbootCmd())
	c.AddCommand(benchDeployCmd())
	c.AddCommand(benchBootstormCmd())
	c.AddCommand(benchFleetCmd())
	c.AddCommand(benchDNSCmd())
	return c
}

func benchPowerCmd() *cobra.Command {
	var (
		cfg   bench.PowerConfig
		write string
	)
	c := &cobra.Command{
		Use:   "power",
		Short: "Poll a lab fleet of virtual BMCs: sweep time, server CPU and RSS, API-to-BMC latency, per worker limit and rack count",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Binary, cfg.Out = bin, os.Stderr
			if cfg.DBURL == "sqlite" {
				cfg.DBURL = ""
			}
			if cfg.Runs < 1 {
				return fmt.Errorf("--runs must be at least 1")
			}
			for _, n := range cfg.Racks {
				if n < 0 || n > 64 {
					return fmt.Errorf("--racks: %d is not from 0 to 64", n)
				}
			}
			rs, err := bench.RunPower(c.Context(), cfg)
			// The comparison of rack counts has its own table and its own
			// section, in the rack part of BENCHMARKS.md.
			table, section := bench.PowerMarkdown(rs), "power"
			if c.Flags().Changed("racks") || cfg.Runs > 1 {
				table, section = bench.PowerRacksMarkdown(rs), "power-racks"
			}
			fmt.Fprint(c.OutOrStdout(), table)
			if err != nil {
				return err
			}
			return writeBenchmarks(write, section, table)
		},
	}
	c.Flags().IntVar(&cfg.Machines, "machines", 10000, "lab machines, each with a BMC (redfish: 10 systems per service)")
	c.Flags().StringVar(&cfg.Kind, "kind", "ipmi", "ipmi or redfish")
	c.Flags().IntSliceVar(&cfg.Workers, "workers", []int{16, 64}, "worker limits to compare (16 is the default)")
	c.Flags().IntVar(&cfg.Samples, "samples", 200, "API-to-BMC latency samples")
	c.Flags().StringVar(&cfg.DBURL, "db", "sqlite", "sqlite or a postgres:// URL whose role may create databases")
	c.Flags().IntSliceVar(&cfg.Racks, "racks", []int{0}, "rack counts to compare: 0 is the rack inside anvil serve; N runs the region with --remote-power and N enrolled racks in the bench process, each with --workers slots, all declaring the BMCs' network (with this flag, --write-benchmarks writes the power-racks section)")
	c.Flags().IntVar(&cfg.Runs, "runs", 1, "repeat the whole comparison this many times, interleaved")
	c.Flags().StringVar(&cfg.ProfileDir, "profile", "", "directory for CPU profiles of each sweep: the region's (its first 10 s) and the bench process's (BMCs and racks); profiling slows what it measures")
	writeFlag(c, &write, "power")
	return c
}

// writeFlag adds --write-benchmarks: rewrite the scenario's section of a
// BENCHMARKS.md (by default the one in the working directory).
func writeFlag(c *cobra.Command, write *string, section string) {
	c.Flags().StringVar(write, "write-benchmarks", "", "rewrite the "+section+" section of this BENCHMARKS.md with the figures")
	c.Flags().Lookup("write-benchmarks").NoOptDefVal = "BENCHMARKS.md"
}

// writeBenchmarks replaces a section of the BENCHMARKS.md at path, if
// path is set, with the date, the machine, the command and the table.
func writeBenchmarks(path, section, table string) error {
	if path == "" {
		return nil
	}
	body := fmt.Sprintf("Measured %s (%d cores), `%s`:\n\n%s", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), benchCommandLine(), table)
	return bench.WriteSection(path, section, body)
}

// benchCommandLine is the command as run, for the record in BENCHMARKS.md;
// --write-benchmarks, --section and --profile change nothing measured and
// are left out.
func benchCommandLine() string {
	out := []string{"anvil"}
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch name {
		case "--write-benchmarks":
			continue
		case "--section", "--profile":
			if !hasValue {
				i++ // its value is the next argument
			}
			continue
		}
		if strings.ContainsAny(a, "?&*;' ") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// benchSetup returns this binary (the server a bench starts) and a context
// that ends on an interrupt, so that an interrupted run still stops its
// servers and deletes what it made on the way out.
func benchSetup(c *cobra.Command) (string, context.Context, context.CancelFunc, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", nil, nil, err
	}
	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	return bin, ctx, stop, nil
}
