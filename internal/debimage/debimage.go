// Package debimage builds the Debian root filesystem tarball that the
// quickstart (`anvil lab demo`) and the end-to-end tests deploy. The
// recipe is one shell script, debian-rootfs.sh, embedded here and printed
// by `anvil lab debian-image --print-recipe`, so what an operator runs by
// hand and what the tests deploy are the same.
package debimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/anvilmetal/anvil/internal/buildcache"
)

// Recipe is the build script: debian-rootfs.sh OUT.tgz, as root.
//
//go:embed debian-rootfs.sh
var Recipe string

// File is the tarball's name in its cache directory.
const File = "debian-rootfs.tgz"

// Options says where the packages come from; empty fields take the
// script's defaults (bookworm from deb.debian.org).
type Options struct {
	Suite, Mirror string
	// Log receives debootstrap's output.
	Log *os.File
}

// ErrNoDebootstrap is returned when debootstrap is not installed.
var ErrNoDebootstrap = errors.New("debootstrap is not installed (Debian package debootstrap)")

// Key hashes what the tarball is made from: the recipe and the options.
func Key(o Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", Recipe, o.Suite, o.Mirror)
	return hex.EncodeToString(h.Sum(nil))
}

// BuildCached returns the path of the tarball under cacheRoot, building it
// first when no build of this recipe and these options is there. The
// build runs debootstrap and needs root and the Debian mirror; built is
// how long it took, zero when the cached tarball was used.
func BuildCached(ctx context.Context, cacheRoot string, o Options) (path string, built time.Duration, err error) {
	dir, err := buildcache.Dir(cacheRoot, "debian-rootfs", Key(o), File, func(tmp string) error {
		t0 := time.Now()
		if err := Build(ctx, filepath.Join(tmp, File), o); err != nil {
			return err
		}
		built = time.Since(t0)
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	return filepath.Join(dir, File), built, nil
}

// Build runs the recipe, writing the tarball to out.
func Build(ctx context.Context, out string, o Options) error {
	if _, err := exec.LookPath("debootstrap"); err != nil {
		return ErrNoDebootstrap
	}
	if os.Geteuid() != 0 {
		return errors.New("building the Debian image needs root (debootstrap)")
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", Recipe, "debian-rootfs.sh", out)
	cmd.Env = os.Environ()
	if o.Suite != "" {
		cmd.Env = append(cmd.Env, "SUITE="+o.Suite)
	}
	if o.Mirror != "" {
		cmd.Env = append(cmd.Env, "MIRROR="+o.Mirror)
	}
	var tail bytes.Buffer
	cmd.Stdout, cmd.Stderr = &tail, &tail
	if o.Log != nil {
		cmd.Stdout, cmd.Stderr = o.Log, o.Log
	}
	if err := cmd.Run(); err != nil {
		msg := tail.Bytes()
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return fmt.Errorf("build the Debian image: %w: %s", err, bytes.TrimSpace(msg))
	}
	return nil
}
