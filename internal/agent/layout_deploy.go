package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// layoutTarget is where the layout's root filesystem is mounted while
// the image goes in.
var layoutTarget = "/target"

// deployLayout lays the task's storage configuration onto this machine's
// disks and the root filesystem tarball at src onto it (see
// installLayout). The seed goes into the installed root, not onto a
// partition of its own.
func (a *Agent) deployLayout(ctx context.Context, task agentapi.Task, hc *http.Client, src string, img agentapi.Image) error {
	disks, err := matchDisks(*task.Storage, localDisks(strings.TrimSuffix(a.BlockDir, "sys/block")), a.DevDir)
	if err != nil {
		return err
	}
	fw := bootFirmware()
	a.Logf("deploy layout=%q firmware=%s disks=%v image filetype=%s size=%d", task.Storage.Layout, fw, disks, img.FileType, img.Size)
	start := time.Now()
	var n int64
	err = a.timed("download+layout", func() error {
		stop := a.Heartbeat(ctx)
		defer stop()
		n, err = a.unpackTarball(ctx, hc, src, img, func(r io.Reader, verify func() error) (int64, error) {
			return installLayout(ctx, r, layoutJob{
				Config: *task.Storage, Firmware: fw, Disks: disks, Target: layoutTarget,
				Seed: seedFiles(task, a.id.BootMAC, a.Client.OSUpURL()),
				Logf: a.Logf, Stage: a.Stage, Verify: verify,
			})
		})
		return err
	})
	if err != nil {
		return err
	}
	a.Logf("deploy installed %d MiB onto the layout in %.1f s", n/MiB, time.Since(start).Seconds())
	return nil
}
