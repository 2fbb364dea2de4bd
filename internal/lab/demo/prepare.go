package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/anvilmetal/anvil/internal/datalock"
	"github.com/anvilmetal/anvil/internal/debimage"
	"github.com/anvilmetal/anvil/internal/ephemeral"
)

// prepare clears the previous run's state and builds what is missing:
// the boot loaders, the ephemeral environment and the Debian image.
func (d *run) prepare(ctx context.Context) error {
	if err := d.claimDir(); err != nil {
		return err
	}
	d.data = d.path("data")
	boot := filepath.Join(d.data, "boot")
	if err := d.step("boot loaders from Debian's packages", func() error {
		_, err := d.anvil("import-loaders", "--data", d.data)
		return err
	}); err != nil {
		return err
	}
	var envDir string
	if err := d.step("ephemeral environment (cached in "+d.cfg.Cache+")", func() error {
		var err error
		envDir, err = ephemeral.BuildCached(d.cfg.Cache, d.cfg.SourceRoot)
		return err
	}); err != nil {
		return err
	}
	dst := filepath.Join(boot, "ephemeral")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range []string{ephemeral.KernelFile, ephemeral.InitrdFile, ephemeral.ManifestFile} {
		if err := linkOrCopy(filepath.Join(envDir, f), filepath.Join(dst, f)); err != nil {
			return fmt.Errorf("ephemeral environment: %w", err)
		}
	}
	log, err := os.Create(d.path("debian-image-build.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	return d.step("Debian image (debootstrap once, about 3 minutes; cached in "+d.cfg.Cache+")", func() error {
		path, built, err := debimage.BuildCached(ctx, d.cfg.Cache, debimage.Options{Log: log})
		if err != nil {
			return fmt.Errorf("%w (log: %s)", err, log.Name())
		}
		d.image = path
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if built > 0 {
			d.say("built %s (%s) in %s", path, mib(fi.Size()), built.Round(100e6))
		} else {
			d.say("using %s (%s)", path, mib(fi.Size()))
		}
		return nil
	})
}

// claimDir holds Dir for this run and empties it of a previous run's
// state. A Dir that is not empty and not the demo's is refused, as is one
// another demo holds.
func (d *run) claimDir() error {
	dir := d.cfg.Dir
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, stateMarker)); err != nil {
			return fmt.Errorf("%s exists and is not a lab demo directory: give --dir an empty or new one", dir)
		}
	}
	lock, err := datalock.Acquire(dir, "anvil lab demo")
	var held *datalock.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("%s is in use by %s; stop it, or give this one a --dir of its own", dir, held.Holder)
	}
	if err != nil {
		return err
	}
	d.onCleanup(func() { lock.Release() })
	for _, e := range entries {
		if e.Name() == datalock.File {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stateMarker), []byte("anvil lab demo state; removed by the next run\n"), 0o644)
}

// anvil runs an anvil subcommand here and returns its output.
func (d *run) anvil(args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(d.cfg.Anvil, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("anvil %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

func linkOrCopy(from, to string) error {
	_ = os.Remove(to)
	if err := os.Link(from, to); err == nil {
		return nil
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
