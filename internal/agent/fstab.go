package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// rootFstabLine mounts the installed root filesystem read-write once its
// boot-time check has run: the kernel mounts root=UUID=... ro, the init
// system checks it (pass 1) and remounts it with these options. Without
// it a tarball's root stays read-only and cloud-init cannot write
// /var/lib/cloud.
func rootFstabLine(uuid string) string {
	return fmt.Sprintf("UUID=%s / ext4 defaults,errors=remount-ro 0 1", uuid)
}

// writeFstab writes root's /etc/fstab with the root filesystem by UUID.
// Lines of the tarball's own fstab that mount something else are kept;
// its root line, and debootstrap's "UNCONFIGURED" placeholder, are not.
func writeFstab(root, uuid string) error {
	return mergeFstab(root, "the root filesystem by UUID", rootFstabLine(uuid)+"\n")
}

// mergeFstab writes root's /etc/fstab as ours (fstab lines, what of)
// followed by the tarball's own lines for mount points ours leaves
// alone; debootstrap's "UNCONFIGURED" placeholder is dropped.
func mergeFstab(root, what, ours string) error {
	path := filepath.Join(root, "etc", "fstab")
	mine := map[string]bool{}
	for _, line := range strings.Split(ours, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] != "none" {
			mine[f[1]] = true
		}
	}
	var kept []string
	if b, err := os.ReadFile(path); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && !strings.HasPrefix(f[0], "#") && mine[f[1]]:
			case strings.Contains(line, "UNCONFIGURED FSTAB"):
			case strings.TrimSpace(line) == "":
			default:
				kept = append(kept, line)
			}
		}
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	out := "# written by Anvil's installer: " + what + "\n" + ours
	if len(kept) > 0 {
		out += strings.Join(kept, "\n") + "\n"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// An fstab that is a symbolic link would be written through it,
	// outside the new root.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// extlinuxConfig boots kernel (and initrd, when there is one) from the
// root filesystem uuid, mounted read-only until fstab remounts it (see
// rootFstabLine).
func extlinuxConfig(kernel, initrd, uuid string) string {
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "SERIAL 0 115200\nDEFAULT linux\nPROMPT 0\nTIMEOUT 0\nLABEL linux\n  KERNEL /boot/%s\n", kernel)
	if initrd != "" {
		fmt.Fprintf(&cfg, "  INITRD /boot/%s\n", initrd)
	}
	fmt.Fprintf(&cfg, "  APPEND root=UUID=%s ro console=tty0 console=ttyS0,115200\n", uuid)
	return cfg.String()
}
