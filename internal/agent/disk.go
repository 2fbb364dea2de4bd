package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Disk is a whole disk the agent may write.
type Disk struct {
	Name string // kernel name: vda, sda, nvme0n1
	Size int64  // bytes
}

// MiB is a mebibyte.
const MiB = 1 << 20

// skippedDisks are kernel name prefixes that are never installation
// targets: virtual, optical and assembled devices.
var skippedDisks = []string{"loop", "ram", "zram", "sr", "dm-", "md", "nbd", "fd"}

// ListDisks returns the writable, non-removable disks under dir (a
// /sys/block), sorted by name.
func ListDisks(dir string) ([]Disk, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Disk
	for _, e := range ents {
		name := e.Name()
		if hasAnyPrefix(name, skippedDisks) {
			continue
		}
		if readSysInt(filepath.Join(dir, name, "removable")) == 1 || readSysInt(filepath.Join(dir, name, "ro")) == 1 {
			continue
		}
		size := readSysInt(filepath.Join(dir, name, "size")) * 512
		if size <= 0 {
			continue
		}
		out = append(out, Disk{Name: name, Size: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// diskByName reads one disk, whatever its flags: the region named it.
func diskByName(dir, name string) (Disk, error) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return Disk{}, fmt.Errorf("bad disk name %q", name)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		return Disk{}, fmt.Errorf("disk %s not found", name)
	}
	size := readSysInt(filepath.Join(dir, name, "size")) * 512
	if size <= 0 {
		return Disk{}, fmt.Errorf("disk %s has no size", name)
	}
	return Disk{Name: name, Size: size}, nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func readSysInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// mib renders a byte count in MiB, rounded up, for messages.
func mib(n int64) int64 { return (n + MiB - 1) / MiB }
