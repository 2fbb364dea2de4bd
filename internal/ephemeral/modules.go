package ephemeral

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// WantedModules are the drivers the environment loads when the kernel has
// them as modules: NICs, disk controllers and the in-band IPMI interface.
// Missing ones are skipped (and listed in the manifest); ones built into the
// kernel need nothing.
var WantedModules = []string{
	// buses the devices below sit on
	"virtio_pci",
	// NICs
	"virtio_net", "e1000", "e1000e", "igb", "ixgbe", "i40e", "bnxt_en", "tg3", "r8169",
	// disks
	"virtio_blk", "virtio_scsi", "sd_mod", "ahci", "nvme", "ata_piix",
	// in-band IPMI
	"ipmi_msghandler", "ipmi_devintf", "ipmi_si",
	// raw sockets for DHCP
	"af_packet",
	// hardware RNGs, so the kernel's random pool is ready early on
	// machines (and VMs) whose CPU has no RDRAND
	"virtio_rng", "intel_rng", "amd_rng",
	// root filesystem tarballs: ext4 (jbd2, mbcache and crc16 come from
	// modules.dep) and the crc32c ext4 asks the crypto API for at mount
	"ext4", "crc32c_generic", "crc32c_intel",
}

// modName is a module's canonical name: file name without the .ko suffix
// (and compression), dashes as underscores, as the kernel names it.
func modName(file string) string {
	b := path.Base(file)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// moduleIndex is what modules.dep and modules.builtin say about a kernel.
type moduleIndex struct {
	path    map[string]string   // name → path relative to the modules dir
	deps    map[string][]string // name → names it needs
	builtin map[string]bool
}

func readModuleIndex(dir string) (*moduleIndex, error) {
	idx := &moduleIndex{path: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	dep, err := os.ReadFile(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(dep))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n := modName(mod)
		idx.path[n] = mod
		for _, d := range strings.Fields(rest) {
			idx.deps[n] = append(idx.deps[n], modName(d))
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(b)) {
			idx.builtin[modName(l)] = true
		}
	}
	return idx, sc.Err()
}

// resolve orders the wanted modules and their dependencies so each comes
// after everything it needs. It returns the order, the wanted names that are
// built in and those the kernel has neither way.
func (idx *moduleIndex) resolve(wanted []string) (order, builtin, missing []string) {
	seen := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, d := range idx.deps[n] {
			visit(d)
		}
		order = append(order, n)
	}
	for _, w := range wanted {
		n := modName(w)
		switch {
		case idx.builtin[n]:
			builtin = append(builtin, n)
		case idx.path[n] == "":
			missing = append(missing, n)
		default:
			visit(n)
		}
	}
	return order, builtin, missing
}

// readModule reads a module file, decompressed: plain .ko and .ko.gz
// directly, .ko.xz and .ko.zst through the xz or zstd command when the
// build host has it.
func readModule(file string) ([]byte, error) {
	switch {
	case strings.HasSuffix(file, ".ko"):
		return os.ReadFile(file)
	case strings.HasSuffix(file, ".ko.gz"):
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return io.ReadAll(zr)
	case strings.HasSuffix(file, ".ko.xz"):
		return decompressWith("xz", file)
	case strings.HasSuffix(file, ".ko.zst"):
		return decompressWith("zstd", file)
	}
	return nil, fmt.Errorf("%s: unknown module format", file)
}

func decompressWith(tool, file string) ([]byte, error) {
	if _, err := exec.LookPath(tool); err != nil {
		return nil, fmt.Errorf("%s is compressed and %s is not installed", file, tool)
	}
	out, err := exec.Command(tool, "-dc", file).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -dc %s: %w", tool, file, err)
	}
	return out, nil
}
