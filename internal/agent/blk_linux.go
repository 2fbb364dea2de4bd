package agent

import (
	"os"

	"golang.org/x/sys/unix"
)

// rereadPartitions asks the kernel to read dev's partition table again
// (best effort: the machine reboots next anyway).
func rereadPartitions(dev string) {
	f, err := os.Open(dev)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = unix.IoctlGetInt(int(f.Fd()), unix.BLKRRPART)
}
