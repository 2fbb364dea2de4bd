package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/storage"
)

// A boot loader step that fails inside the installed system ends the
// installation with the command and what it printed, and everything
// mounted into the target for it is unmounted again. The target is a
// static busybox whose update-initramfs fails.
func TestBootLoaderFailureSaysCommandAndOutput(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chroot and mounts")
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed")
	}
	target := t.TempDir()
	data, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(target, "bin"), 0o755)
	os.MkdirAll(filepath.Join(target, "usr/sbin"), 0o755)
	os.WriteFile(filepath.Join(target, "bin/busybox"), data, 0o755)
	script := "#!/bin/busybox sh\necho 'E: /etc/initramfs-tools/modules: broken' >&2\nexit 3\n"
	os.WriteFile(filepath.Join(target, "usr/sbin/update-initramfs"), []byte(script), 0o755)
	td := &teardown{logf: t.Logf}
	// A RAID makes the installer regenerate the initramfs.
	err = bootLoader(context.Background(), storage.Config{RAIDs: []storage.RAID{{Name: "md0"}}}, td, layoutJob{Firmware: storage.BIOS, Target: target, Logf: t.Logf, Stage: func(string, time.Duration) {}})
	if uerr := td.undo(context.Background(), storage.Config{}); uerr != nil {
		t.Errorf("teardown: %v", uerr)
	}
	want := "in the installed system: update-initramfs -u -k all: exit status 3: E: /etc/initramfs-tools/modules: broken"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if strings.Contains(string(mounts), target) {
		t.Errorf("still mounted under the target:\n%s", mounts)
	}
}
