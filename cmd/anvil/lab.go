package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
)

func labCmd() *cobra.Command {
	var (
		cfg       fleet.Config
		register  string
		key       string
		manifest  string
		zone      string
		pool      string
		regWorker int
		qemuTap   string
		qemuEFI   bool
	)
	c := &cobra.Command{
		Use:   "lab",
		Short: "Run simulated machines behind virtual IPMI and Redfish BMCs, for tests, demos and scale runs",
		Long: `Runs a fleet of simulated machines, each with a virtual BMC that ipmitool
and Redfish clients can drive: one IPMI 2.0 (lanplus) BMC per machine and
Redfish services fronting several systems each. With --register, the
machines are added to an Anvil (or MAAS) server with their power
parameters. Runs until interrupted.`,
		RunE: func(c *cobra.Command, _ []string) error {
			if qemuTap != "" {
				cfg.QEMUTemplate.NetDevs = []string{qemuTap}
			}
			if qemuEFI {
				cfg.QEMUTemplate.Firmware = "efi"
			}
			f, err := fleet.Start(cfg)
			if err != nil {
				return err
			}
			defer f.Close()
			out := c.OutOrStdout()
			fmt.Fprintf(out, "lab: %d machines (%d simulated and %d QEMU behind IPMI BMCs, %d Redfish services) on %s; user %q\n",
				len(f.Machines), cfg.IPMI, cfg.QEMU, cfg.RedfishChassis, cfg.Host, cfg.User)
			if manifest != "" {
				if err := writeManifest(manifest, f.Machines); err != nil {
					return err
				}
				fmt.Fprintf(out, "lab: machines and power parameters written to %s\n", manifest)
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if register != "" {
				cl, err := client.New(register, key)
				if err != nil {
					return err
				}
				t0 := time.Now()
				n, err := registerFleet(ctx, cl, f.Machines, zone, pool, regWorker)
				if err != nil {
					return fmt.Errorf("registered %d machines, then: %w", n, err)
				}
				fmt.Fprintf(out, "lab: registered %d machines in %s\n", n, time.Since(t0).Round(time.Millisecond))
			}
			fmt.Fprintln(out, "lab: running; interrupt to stop")
			<-ctx.Done()
			return nil
		},
	}
	c.AddCommand(labDemoCmd(), labDebianImageCmd())
	fl := c.Flags()
	fl.IntVar(&cfg.IPMI, "ipmi", 3, "machines behind their own IPMI BMC")
	fl.IntVar(&cfg.RedfishChassis, "redfish-chassis", 1, "Redfish services (chassis managers)")
	fl.IntVar(&cfg.SystemsPerChassis, "systems-per-chassis", 2, "systems behind each Redfish service")
	fl.StringVar(&cfg.Host, "host", "127.0.0.1", "address the BMCs listen on")
	fl.StringVar(&cfg.User, "user", "admin", "BMC user")
	fl.StringVar(&cfg.Password, "password", "password", "BMC password")
	fl.Float64Var(&cfg.DeadShare, "dead-share", 0, "fraction of BMCs that never answer")
	fl.Float64Var(&cfg.SlowShare, "slow-share", 0, "fraction of BMCs that answer slowly")
	fl.DurationVar(&cfg.SlowDelay, "slow-delay", 2*time.Second, "delay of the slow BMCs")
	fl.Uint64Var(&cfg.Seed, "seed", 1, "seed for choosing the dead and slow BMCs")
	fl.StringVar(&register, "register", "", "Anvil URL (http://host:5240/MAAS/) to add the machines to")
	fl.StringVar(&key, "key", os.Getenv("ANVIL_API_KEY"), "API key for --register (or $ANVIL_API_KEY)")
	fl.StringVar(&manifest, "manifest", "", "write the machines and their power parameters as JSON to this file (it holds the BMC password)")
	fl.StringVar(&zone, "zone", "", "zone for registered machines")
	fl.StringVar(&pool, "pool", "", "pool for registered machines")
	fl.IntVar(&regWorker, "register-workers", 8, "concurrent requests while registering")
	fl.IntVar(&cfg.QEMU, "qemu", 0, "machines that are real QEMU processes (TCG) behind IPMI BMCs")
	fl.IntVar(&cfg.QEMUTemplate.Memory, "qemu-memory", 512, "memory of each QEMU machine, MiB")
	fl.StringVar(&cfg.QEMUTemplate.Disk, "qemu-disk", "", "disk image for the QEMU machines (shared read-only use is the caller's business)")
	fl.StringVar(&qemuTap, "qemu-tap", "", "tap device pattern per QEMU machine, e.g. tap%d (default: user-mode network, local only)")
	fl.StringVar(&cfg.QEMUTemplate.Netns, "qemu-netns", "", "network namespace to run QEMU in")
	fl.BoolVar(&qemuEFI, "qemu-efi", false, "UEFI firmware (OVMF) instead of SeaBIOS")
	fl.StringVar(&cfg.StateDir, "state-dir", "", "directory for QEMU machines' state and serial logs (default: temporary)")
	return c
}

func writeManifest(path string, ms []fleet.Machine) error {
	b, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// registerFleet adds every machine through the API with its power
// parameters.
func registerFleet(ctx context.Context, cl *client.Client, ms []fleet.Machine, zone, pool string, workers int) (int, error) {
	jobs := make(chan fleet.Machine)
	var (
		mu    sync.Mutex
		done  int
		first error
		wg    sync.WaitGroup
	)
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range jobs {
				f := url.Values{"hostname": {m.Hostname}, "mac_addresses": {m.MAC}, "architecture": {"amd64/generic"}, "power_type": {m.PowerType}}
				for k, v := range m.Params {
					f.Set("power_parameters_"+k, v)
				}
				if zone != "" {
					f.Set("zone", zone)
				}
				if pool != "" {
					f.Set("pool", pool)
				}
				_, err := cl.CreateMachine(ctx, f)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("%s: %w", m.Hostname, err)
				} else if err == nil {
					done++
				}
				mu.Unlock()
			}
		}()
	}
	for _, m := range ms {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		jobs <- m
	}
	close(jobs)
	wg.Wait()
	return done, first
}
