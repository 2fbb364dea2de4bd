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
	"github.com/anvilmetal/anvil/internal/diskerase"
)

// Erase modes, as the region sends them.
const (
	EraseQuick       = string(diskerase.Quick)
	EraseFull        = string(diskerase.Full)
	EraseSecure      = string(diskerase.Secure)
	EraseSecureQuick = string(diskerase.SecureQuick)
)

// eraseEnds is how much quick erasing zeroes at each end of a disk: the
// MBR and GPT (primary and backup) and most filesystem, RAID and LVM
// signatures.
const eraseEnds = 2 * MiB

// Erase is the disk-erasing phase: every non-removable disk wiped as the
// task (or the hello answer) says, then OK with, per disk, the method
// used (the region puts it on the release event).
func Erase(ctx context.Context, a *Agent, r agentapi.HelloResponse) error {
	given := r.Erase
	var task agentapi.Task
	err := a.retry(ctx, "task", func(ctx context.Context) (err error) {
		task, err = a.Client.Task(ctx)
		return err
	})
	if err == nil && task.Erase != "" {
		given = task.Erase
	} else if err != nil && given == "" {
		return err
	}
	mode, err := diskerase.ParseMode(given)
	if err != nil {
		return err
	}
	disks, err := ListDisks(a.BlockDir)
	if err != nil {
		return fmt.Errorf("listing disks: %w", err)
	}
	names := make([]string, len(disks))
	for i, d := range disks {
		names[i] = d.Name
	}
	a.Logf("erase mode=%s disks=%s", mode, strings.Join(names, ","))
	stop := a.Heartbeat(ctx)
	var results []diskerase.Result
	err = a.timed("erase", func() error {
		for _, d := range disks {
			r, err := a.eraseDisk(ctx, mode, d)
			if err != nil {
				return fmt.Errorf("erasing %s: %w", d.Name, err)
			}
			results = append(results, r)
		}
		return nil
	})
	stop()
	if err != nil {
		return err
	}
	summary := diskerase.Summary(results)
	err = a.retry(ctx, "signal OK", func(ctx context.Context) error {
		return a.Client.Signal(ctx, agentapi.StatusOK, summary, nil)
	})
	if err != nil {
		return err
	}
	a.Logf("signal status=OK erase: %s", summary)
	return nil
}

// eraseDisk erases one disk: its own secure erase first when the mode
// asks and the disk has one, else the mode's fall-back.
func (a *Agent) eraseDisk(ctx context.Context, mode diskerase.Mode, d Disk) (diskerase.Result, error) {
	dev := filepath.Join(a.DevDir, d.Name)
	res := diskerase.Result{Disk: d.Name}
	start := time.Now()
	if mode.WantsSecure() {
		method, why := a.secureErase(dev, d.Name)
		if method != "" {
			res.Method = method
			a.Logf("erase %s %s in %.1f s", d.Name, method, time.Since(start).Seconds())
			return res, nil
		}
		res.Why = why
		a.Logf("erase %s no secure erase: %s", d.Name, why)
	}
	res.Method = mode.Fallback()
	var n int64
	var err error
	if res.Method == diskerase.MethodQuick {
		n, err = eraseQuick(dev, d.Size)
	} else {
		n, err = a.eraseFull(ctx, dev, d)
	}
	if err != nil {
		return res, err
	}
	secs := time.Since(start).Seconds()
	a.Logf("erase %s zeroed %d MiB in %.1f s (%.1f MB/s)", d.Name, n/MiB, secs, float64(n)/1e6/max(secs, 1e-9))
	return res, nil
}

// secureErase tries the disk's own erase; a method when it was done,
// else why not (a failed attempt included: the fall-back then runs, as
// MAAS's wipe script does).
func (a *Agent) secureErase(dev, name string) (diskerase.Method, string) {
	if why := diskerase.NoSecureErase(name); why != "" {
		return "", why
	}
	erase := ataSecureErase
	if diskerase.KindOf(name) == diskerase.KindNVMe {
		erase = nvmeSecureErase
	}
	method, why, err := erase(a, dev, name)
	if err != nil {
		return "", fmt.Sprintf("the secure erase failed: %v", err)
	}
	return method, why
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
