package agent

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MountMemoryRoot mounts a tmpfs at dir for a deployment to memory.
func MountMemoryRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return unix.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755")
}

// SwitchRootTo makes root the machine's root and runs init as PID 1
// there: the kernel filesystems move along, then busybox's switch_root
// (which empties the initramfs) takes over this process. It returns only
// when that cannot start.
func SwitchRootTo(root, init string) error {
	bb, err := findTool("busybox")
	if err != nil {
		return fmt.Errorf("switch root: %w", err)
	}
	_ = unix.Unmount("/tmp", unix.MNT_DETACH)
	for _, m := range []string{"/dev", "/proc", "/sys", "/run"} {
		dst := filepath.Join(root, m)
		_ = os.MkdirAll(dst, 0o755)
		if err := unix.Mount(m, dst, "", unix.MS_MOVE, ""); err != nil {
			fmt.Fprintf(os.Stderr, "%smove %s: %v\n", Prefix, m, err)
		}
	}
	unix.Sync()
	err = unix.Exec(bb, []string{"switch_root", root, init}, []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TERM=linux"})
	return fmt.Errorf("switch root to %s: %w", root, err)
}
