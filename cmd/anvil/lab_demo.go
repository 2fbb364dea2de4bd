package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/debimage"
	"github.com/anvilmetal/anvil/internal/ephemeral"
	"github.com/anvilmetal/anvil/internal/lab/demo"
)

func labDemoCmd() *cobra.Command {
	cfg := demo.Config{}
	cache, _ := os.UserCacheDir()
	c := &cobra.Command{
		Use:   "demo",
		Short: "From this source tree to a deployed Debian machine: Anvil, DHCP and one QEMU machine in a network namespace (root)",
		Long: `Builds what is missing (boot loaders from Debian's packages, the ephemeral
environment, a Debian root filesystem tarball; the last two cached), makes
a network namespace with a bridge on 198.51.100.0/24, starts anvil serve
there with DHCP, adds the subnet, its dynamic range and the image through
the API, and boots one QEMU machine, network first, behind an IPMI BMC
(ipmi_sim). The machine enlists, is commissioned and is deployed with
Debian. Prints where to look; interrupt (Ctrl-C) stops everything it
started and removes the namespace. Run it as root from the source tree.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := ephemeral.ModuleRoot()
			if err != nil {
				return fmt.Errorf("lab demo builds the environment's agent from the Anvil sources: run it inside the source tree (%w)", err)
			}
			cfg.SourceRoot = root
			if cfg.Anvil, err = os.Executable(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return demo.Run(ctx, cfg, c.OutOrStdout())
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Dir, "dir", "./anvil-demo", "the demo's state: data directory, logs, the machine's disk and serial console (the previous run's are removed)")
	fl.StringVar(&cfg.Cache, "cache", filepath.Join(cache, "anvil"), "builds kept across runs: the ephemeral environment and the Debian image")
	fl.StringVar(&cfg.Netns, "netns", "anvil-demo", "network namespace to create")
	fl.StringVar(&cfg.Web, "web", "127.0.0.1:5240", "address on this host where the API and web pages are forwarded")
	fl.IntVar(&cfg.Memory, "memory", 1024, "the machine's memory, MiB")
	fl.IntVar(&cfg.DiskGiB, "disk", 4, "the machine's disk, GiB (sparse)")
	fl.StringVar(&cfg.Accel, "accel", "tcg", "QEMU accelerator: tcg (default), or kvm where it works")
	fl.StringVar(&cfg.SSHKey, "ssh-key", "", "public key file for the deployed machine's user debian")
	return c
}

func labDebianImageCmd() *cobra.Command {
	var (
		out   string
		print bool
	)
	c := &cobra.Command{
		Use:   "debian-image",
		Short: "Build the Debian root filesystem tarball the demo and the tests deploy (root, debootstrap), or print its recipe",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if print {
				_, err := fmt.Fprint(c.OutOrStdout(), debimage.Recipe)
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			t0 := time.Now()
			if err := debimage.Build(ctx, out, debimage.Options{Log: os.Stderr}); err != nil {
				return err
			}
			fi, err := os.Stat(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: %d bytes, built in %s\n", out, fi.Size(), time.Since(t0).Round(time.Second))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "debian-rootfs.tgz", "the tarball to write")
	c.Flags().BoolVar(&print, "print-recipe", false, "print the build script instead (sh SCRIPT OUT.tgz builds the same tarball)")
	return c
}
