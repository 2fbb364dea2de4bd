package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/storage"
)

// LayoutTools are the programs a storage layout's plan runs (see
// storage.MakePlan); the environment carries those the build machine has.
// LVM's commands are lvm's subcommands, so lvm alone is enough.
var LayoutTools = []string{"wipefs", "sgdisk", "sfdisk", "partx", "mdadm", "lvm", "make-bcache",
	"mkfs.ext2", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkswap", "blkid"}

// lvmCommands run as `lvm <command>` when the environment has no link of
// that name.
var lvmCommands = []string{"pvcreate", "vgcreate", "lvcreate", "vgchange", "vgremove", "pvremove", "lvs", "vgs", "pvs"}

// layoutJob is one installation of a root filesystem tarball onto a
// storage layout.
type layoutJob struct {
	Config   storage.Config
	Firmware storage.Firmware
	Disks    map[string]string // the configuration's disk names → devices here
	Target   string            // where the root filesystem is mounted
	Seed     []SeedFile
	Logf     func(string, ...any)
	Stage    func(name string, d time.Duration)
	// Verify runs once the archive is extracted, before the boot loader
	// goes in: the download's checksum.
	Verify func() error
}

// efiDir exists when the kernel was started by UEFI firmware.
var efiDir = "/sys/firmware/efi"

// bootFirmware is how this machine booted: UEFI when the kernel shows the
// firmware's EFI tables, else BIOS.
func bootFirmware() storage.Firmware {
	if _, err := os.Stat(efiDir); err == nil {
		return storage.UEFI
	}
	return storage.BIOS
}

// localDisk is a disk of this machine as the configuration may name it.
type localDisk struct {
	Name   string   // kernel name
	Serial string   // as commissioning reported it
	IDs    []string // names under /dev/disk/by-id
	Size   int64
}

// localDisks reads the disks under root's /sys/block with their serials
// and by-id names: the links udev made when there are some, else the
// names udev gives virtio and NVMe disks (the environment runs no udev).
func localDisks(root string) []localDisk {
	links := map[string][]string{}
	if ents, err := os.ReadDir(filepath.Join(root, "dev/disk/by-id")); err == nil {
		for _, e := range ents {
			if t, err := os.Readlink(filepath.Join(root, "dev/disk/by-id", e.Name())); err == nil {
				links[filepath.Base(t)] = append(links[filepath.Base(t)], e.Name())
			}
		}
	}
	var out []localDisk
	for _, d := range CollectDisks(root) {
		l := localDisk{Name: d.Name, Serial: d.Serial, IDs: links[d.Name], Size: d.Size}
		if d.Serial != "" {
			under := strings.ReplaceAll(strings.TrimSpace(d.Model), " ", "_") + "_" + strings.ReplaceAll(d.Serial, " ", "_")
			switch {
			case strings.HasPrefix(d.Name, "vd"):
				l.IDs = append(l.IDs, "virtio-"+d.Serial)
			case strings.HasPrefix(d.Name, "nvme"):
				l.IDs = append(l.IDs, "nvme-"+under)
			case strings.HasPrefix(d.Name, "sd"):
				l.IDs = append(l.IDs, "ata-"+under, "scsi-"+under)
			}
		}
		out = append(out, l)
	}
	return out
}

// matchDisks maps each disk of c to a device of this machine: by serial
// when the configuration has one, else by its by-id path, else by its
// kernel name. A disk that is not here, or is smaller than the
// configuration says, is refused in words: a layout is never written to
// a disk it was not made for.
func matchDisks(c storage.Config, local []localDisk, devDir string) (map[string]string, error) {
	out := map[string]string{}
	taken := map[string]string{}
	for _, d := range c.Disks {
		i, how := -1, ""
		switch {
		case d.Serial != "":
			i, how = slices.IndexFunc(local, func(l localDisk) bool { return l.Serial == d.Serial }), "serial "+d.Serial
		case d.IDPath != "":
			id := filepath.Base(d.IDPath)
			i, how = slices.IndexFunc(local, func(l localDisk) bool { return slices.Contains(l.IDs, id) }), d.IDPath
		default:
			i, how = slices.IndexFunc(local, func(l localDisk) bool { return l.Name == d.Name }), "name "+d.Name
		}
		if i < 0 {
			return nil, fmt.Errorf("storage: disk %s (%s) is not on this machine; it has %s", d.Name, how, describeDisks(local))
		}
		l := local[i]
		if l.Size < d.Size {
			return nil, fmt.Errorf("storage: disk %s (%s) is %s here, %d MiB, smaller than the layout's %d MiB", d.Name, how, l.Name, l.Size/MiB, d.Size/MiB)
		}
		if other, dup := taken[l.Name]; dup {
			return nil, fmt.Errorf("storage: disks %s and %s of the layout are both %s here", other, d.Name, l.Name)
		}
		taken[l.Name] = d.Name
		out[d.Name] = filepath.Join(devDir, l.Name)
	}
	return out, nil
}

func describeDisks(local []localDisk) string {
	if len(local) == 0 {
		return "no disks"
	}
	s := make([]string, len(local))
	for i, l := range local {
		s[i] = fmt.Sprintf("%s (serial %q, %d MiB)", l.Name, l.Serial, l.Size/MiB)
	}
	return strings.Join(s, ", ")
}

// bootDisks are the disks the filesystem holding /boot (or / when there
// is no separate /boot) spans: GRUB's BIOS core image goes on each, so
// the machine starts with any one of them gone.
func bootDisks(c storage.Config) ([]string, error) {
	devs, err := c.Devices()
	if err != nil {
		return nil, err
	}
	fs, ok := c.FilesystemAt("/boot")
	if !ok {
		fs, ok = c.FilesystemAt("/")
	}
	if !ok {
		return nil, fmt.Errorf("storage: no filesystem at /")
	}
	var out []string
	var walk func(string)
	walk = func(name string) {
		d := devs[name]
		if d.Kind == storage.KindDisk {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
			return
		}
		for _, p := range d.Parents {
			walk(p)
		}
	}
	walk(fs.Device)
	slices.Sort(out)
	return out, nil
}

// espPartition is the disk and partition number of the EFI system
// partition (the filesystem at /boot/efi), for the firmware's boot entry.
func espPartition(c storage.Config) (disk string, number int, ok bool) {
	fs, found := c.FilesystemAt("/boot/efi")
	if !found {
		return "", 0, false
	}
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			if storage.PartitionName(t.Disk, p.Number) == fs.Device {
				return t.Disk, p.Number, true
			}
		}
	}
	return "", 0, false
}

// seedDir is where cloud-init's NoCloud data source reads a seed from
// the root filesystem.
const seedDir = "var/lib/cloud/seed/nocloud"

// writeSeedDir writes the seed into the installed root: with a layout the
// disks are the operator's, so no CIDATA partition is added to them.
// Files are root's alone, as user data may hold secrets.
func writeSeedDir(root string, files []SeedFile) error {
	dir := filepath.Join(root, seedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		os.Remove(p) // a link from the image is not written through
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return fmt.Errorf("seed %s: %w", f.Name, err)
		}
	}
	// Only NoCloud: cloud-init then does not probe for clouds it is not on.
	cfg := filepath.Join(root, "etc/cloud/cloud.cfg.d/90-anvil-datasource.cfg")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		return err
	}
	os.Remove(cfg)
	return os.WriteFile(cfg, []byte("datasource_list: [ NoCloud, None ]\n"), 0o644)
}

// grubDefaults makes the installed GRUB and kernel speak on the serial
// console as well as the screen, as the tarball path's extlinux does.
const grubDefaults = `GRUB_TIMEOUT=1
GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX console=tty0 console=ttyS0,115200"
GRUB_TERMINAL="console serial"
GRUB_SERIAL_COMMAND="serial --speed=115200"
`

// mdadmConf is the target's mdadm.conf: the image's lines but its ARRAY
// lines, then the arrays as `mdadm --detail --scan` gives them, so the
// initramfs assembles them by UUID.
func mdadmConf(old, scan string) string {
	var b strings.Builder
	for _, l := range strings.Split(old, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "ARRAY") || strings.TrimSpace(l) == "" {
			continue
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("# arrays of Anvil's storage layout\n")
	b.WriteString(strings.TrimSpace(scan) + "\n")
	return b.String()
}

// bootOrder puts the entry the machine booted from (the network, on a
// machine Anvil deploys) first, then the new entry, then the others: the
// machine keeps asking the region what to boot, as MAAS's machines do.
func bootOrder(current, added string, order []string) []string {
	out := []string{}
	if current != "" {
		out = append(out, current)
	}
	if added != "" && added != current {
		out = append(out, added)
	}
	for _, o := range order {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// tailOutput keeps a failed command's last lines for the timeline.
func tailOutput(b []byte) string {
	const max = 1500
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = "..." + s[len(s)-max:]
	}
	return s
}
