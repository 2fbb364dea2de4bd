package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// Erase modes.
const (
	EraseQuick  = "quick"
	EraseFull   = "full"
	EraseSecure = "secure"
)

// eraseEnds is how much quick erasing zeroes at each end of a disk: the
// MBR and GPT (primary and backup) and most filesystem, RAID and LVM
// signatures.
const eraseEnds = 2 * MiB

// Erase is the disk-erasing phase: every non-removable disk wiped as the
// task (or the hello answer) says, then OK.
func Erase(ctx context.Context, a *Agent, r agentapi.HelloResponse) error {
	mode := r.Erase
	var task agentapi.Task
	err := a.retry(ctx, "task", func(ctx context.Context) (err error) {
		task, err = a.Client.Task(ctx)
		return err
	})
	if err == nil && task.Erase != "" {
		mode = task.Erase
	} else if err != nil && mode == "" {
		return err
	}
	if mode == "" {
		mode = EraseQuick
	}
	note := ""
	switch mode {
	case EraseQuick, EraseFull:
	case EraseSecure:
		// The drives' own secure erase (ATA SECURITY ERASE UNIT, NVMe
		// Format/Sanitize) is not done here yet: every block is zeroed.
		note = " (secure erase not available in this environment: zeroed every block instead)"
		mode = EraseFull
	default:
		return fmt.Errorf("unknown erase mode %q", mode)
	}
	disks, err := ListDisks(a.BlockDir)
	if err != nil {
		return fmt.Errorf("listing disks: %w", err)
	}
	names := make([]string, len(disks))
	for i, d := range disks {
		names[i] = d.Name
	}
	a.Logf("erase mode=%s disks=%s%s", mode, strings.Join(names, ","), note)
	stop := a.Heartbeat(ctx)
	err = a.timed("erase", func() error {
		for _, d := range disks {
			start := time.Now()
			var n int64
			var err error
			if mode == EraseQuick {
				n, err = eraseQuick(filepath.Join(a.DevDir, d.Name), d.Size)
			} else {
				n, err = a.eraseFull(ctx, filepath.Join(a.DevDir, d.Name), d)
			}
			if err != nil {
				return fmt.Errorf("erasing %s: %w", d.Name, err)
			}
			secs := time.Since(start).Seconds()
			a.Logf("erase %s zeroed %d MiB in %.1f s (%.1f MB/s)", d.Name, n/MiB, secs, float64(n)/1e6/max(secs, 1e-9))
		}
		return nil
	})
	stop()
	if err != nil {
		return err
	}
	return a.signalOK(ctx, "erase"+note)
}

func (a *Agent) signalOK(ctx context.Context, what string) error {
	err := a.retry(ctx, "signal OK", func(ctx context.Context) error {
		return a.Client.Signal(ctx, agentapi.StatusOK, "", nil)
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK %s", what)
	return nil
}

// eraseQuick zeroes the first and last eraseEnds bytes of dev.
func eraseQuick(dev string, size int64) (int64, error) {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := min(int64(eraseEnds), size)
	zero := make([]byte, n)
	if _, err := f.WriteAt(zero, 0); err != nil {
		return 0, err
	}
	tail := max(size-eraseEnds, 0)
	if _, err := f.WriteAt(zero[:size-tail], tail); err != nil {
		return 0, err
	}
	return n + size - tail, f.Sync()
}

// eraseFull zeroes every byte of the disk.
func (a *Agent) eraseFull(ctx context.Context, dev string, d Disk) (int64, error) {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zero := make([]byte, writeChunk)
	var off int64
	last := time.Now()
	for off < d.Size {
		if ctx.Err() != nil {
			return off, ctx.Err()
		}
		n := min(int64(len(zero)), d.Size-off)
		if _, err := f.WriteAt(zero[:n], off); err != nil {
			return off, err
		}
		off += n
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			a.Logf("erase %s progress %d of %d MiB", d.Name, off/MiB, d.Size/MiB)
		}
	}
	if off != d.Size {
		return off, errors.New("short erase")
	}
	return off, f.Sync()
}

// Release is the releasing phase: nothing to do here but say so.
func Release(ctx context.Context, a *Agent, _ agentapi.HelloResponse) error {
	return a.signalOK(ctx, "release")
}
