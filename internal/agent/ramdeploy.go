package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// DefaultMemoryRoot is where a deployment to memory is unpacked.
const DefaultMemoryRoot = "/sysroot"

// initCandidates are the programs a root filesystem boots, in the order
// they are looked for.
var initCandidates = []string{"/sbin/init", "/usr/sbin/init", "/lib/systemd/systemd", "/usr/lib/systemd/systemd", "/init"}

// deployToMemory is a deployment that runs from memory (ephemeral_deploy):
// the root filesystem tarball is unpacked into a tmpfs, the same NoCloud
// seed a disk deployment gets is written into it, the region is told the
// machine is deployed, and the environment switches its root to the
// image's init. No disk is opened.
//
// The machine then runs the environment's kernel: the image's own kernel
// would need kexec, and a tarball's modules for another kernel version are
// not loaded. The region hears of the deployment from the environment
// (signal OK) rather than from the deployed OS: the token a phone_home
// would carry ends with the phase, and the image may have no cloud-init.
func (a *Agent) deployToMemory(ctx context.Context, task agentapi.Task, hc *http.Client, src string, img agentapi.Image) error {
	if !isTarball(img.FileType) {
		return fmt.Errorf("a deployment to memory needs a root filesystem tarball (tgz, tbz or txz); this image is %s, a disk image", img.FileType)
	}
	if a.SwitchRoot == nil {
		return errors.New("this environment cannot switch its root: no deployment to memory here")
	}
	root := a.MemoryRoot
	if root == "" {
		root = DefaultMemoryRoot
	}
	if a.MountMemory != nil {
		if err := a.MountMemory(root); err != nil {
			return fmt.Errorf("memory root %s: %w", root, err)
		}
	}
	a.Logf("deploy to memory image filetype=%s size=%d root=%s", img.FileType, img.Size, root)
	start := time.Now()
	var n int64
	err := a.timed("download+unpack", func() error {
		stop := a.Heartbeat(ctx)
		defer stop()
		var err error
		n, err = a.unpackTarball(ctx, hc, src, img, func(r io.Reader, verify func() error) (int64, error) {
			n, err := extractTar(r, root)
			if err != nil {
				return n, fmt.Errorf("unpack into memory: %w", err)
			}
			return n, verify()
		})
		return err
	})
	if err != nil {
		return err
	}
	a.Logf("deploy unpacked %d MiB into memory in %.1f s", n/MiB, time.Since(start).Seconds())
	if err := writeSeedDir(root, seedFiles(task, a.id.BootMAC, "")); err != nil {
		return fmt.Errorf("seed in memory: %w", err)
	}
	init, err := findInit(root)
	if err != nil {
		return err
	}
	err = a.timed("signal", func() error {
		return a.retry(ctx, "signal OK", func(ctx context.Context) error {
			return a.Client.Signal(ctx, agentapi.StatusOK,
				fmt.Sprintf("running from memory (%d MiB unpacked, %s); the disks were not touched", n/MiB, init), nil)
		})
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK in memory")
	a.printStages()
	a.Logf("booting %s from memory", init)
	return a.SwitchRoot(root, init)
}

// findInit names the first of initCandidates the root has (a link counts:
// it is resolved once the root is switched).
func findInit(root string) (string, error) {
	for _, p := range initCandidates {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the image has no init to boot (none of %v)", initCandidates)
}
