package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/anvilmetal/anvil/internal/bench"
)

func benchDeployCmd() *cobra.Command {
	cfg := bench.DeployConfig{Out: os.Stderr}
	var size string
	c := &cobra.Command{
		Use:   "deploy",
		Short: "Compare the deploy phase's image writer with curl | dd writing the same image from a loopback HTTP server to a file",
		RunE: func(c *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Binary = bin
			if cfg.Size, err = bench.ParseSize(size); err != nil {
				return err
			}
			// Interrupted, the run still removes its files.
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := bench.RunDeploy(ctx, cfg)
			if len(res.Runs) > 0 {
				fmt.Fprint(c.OutOrStdout(), bench.DeployMarkdown(res))
			}
			return err
		},
	}
	c.Flags().StringVar(&size, "size", "512MiB", "raw image size (what is written)")
	c.Flags().IntVar(&cfg.Runs, "runs", 3, "runs per method (the median is shown too)")
	c.Flags().StringVar(&cfg.FileType, "filetype", "ddraw", "ddraw, ddgz or ddxz")
	c.Flags().StringVar(&cfg.Dir, "dir", "", "directory for the image and the target file (default the temporary directory)")

	// The image's HTTP server, a process of its own so that its CPU is
	// no method's.
	var file string
	serve := &cobra.Command{
		Use:    "serve-image",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return bench.ServeImage(ctx, file, c.OutOrStdout())
		},
	}
	serve.Flags().StringVar(&file, "file", "", "file served at /image")
	c.AddCommand(serve)
	return c
}
