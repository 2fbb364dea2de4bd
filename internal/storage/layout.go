package storage

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The layouts MAAS computes; "custom" configurations come through the API.
const (
	LayoutFlat   = "flat"
	LayoutLVM    = "lvm"
	LayoutBcache = "bcache"
	LayoutBlank  = "blank"
)

// Layouts are the names ApplyLayout accepts.
var Layouts = []string{LayoutFlat, LayoutLVM, LayoutBcache, LayoutBlank}

// LayoutParams are set_storage_layout's parameters as the form gives
// them; empty means the default.
type LayoutParams struct {
	BootSize, RootSize, RootDevice string
	VGName, LVName, LVSize         string
	CacheDevice, CacheMode         string
	CacheSize                      string
	CacheNoPart                    bool
	// AllowFallback lets bcache without a cache device fall back to flat,
	// as MAAS does after commissioning; the API refuses instead.
	AllowFallback bool
}

// Machine is what a layout is computed for.
type Machine struct {
	Disks    []Disk
	BootDisk string   // a disk's Name; "" takes MAAS's default
	Firmware Firmware // anything but UEFI is laid out for BIOS, as MAAS does
}

// bootDisk is MAAS's get_boot_disk: the one set, else the first disk (by
// id) big enough for a boot partition.
func (m Machine) bootDisk() (Disk, bool) {
	disks := slices.Clone(m.Disks)
	slices.SortFunc(disks, func(a, b Disk) int { return a.ID - b.ID })
	for _, d := range disks {
		if (m.BootDisk == "" && d.Size >= MinBootPartitionSize) || (m.BootDisk != "" && d.Name == m.BootDisk) {
			return d, true
		}
	}
	return Disk{}, false
}

// ApplyLayout computes layout name for m, as MAAS's storage_layouts.py
// does, or returns FieldErrors saying what is wrong. The configuration it
// returns replaces the machine's whole storage configuration.
func ApplyLayout(name string, m Machine, p LayoutParams) (Config, error) {
	e := FieldErrors{}
	if !slices.Contains(Layouts, name) {
		e.Add("storage_layout", "Select a valid choice. %s is not one of the available choices (%s).", name, strings.Join(Layouts, ", "))
		return Config{}, e
	}
	if len(m.Disks) == 0 {
		e.Add("__all__", "Node doesn't have any storage devices to configure.")
		return Config{}, e
	}
	boot, ok := m.bootDisk()
	if !ok {
		e.Add("__all__", "Node doesn't have a boot partition defined.")
		return Config{}, e
	}
	l := &layout{m: m, p: p, boot: boot, e: e}
	l.clean(name)
	if err := e.Err(); err != nil {
		return Config{}, err
	}
	c := Config{Layout: name, BootDisk: boot.Name, Disks: slices.Clone(m.Disks)}
	switch name {
	case LayoutFlat:
		l.flat(&c)
	case LayoutLVM:
		l.lvm(&c)
	case LayoutBcache:
		l.bcache(&c)
	}
	if err := e.Err(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// layout holds one computation's cleaned parameters.
type layout struct {
	m                  Machine
	p                  LayoutParams
	boot               Disk
	e                  FieldErrors
	bootSize, rootSize int64 // 0: none / the rest
	root               Disk
	lvSize             int64
	vg, lv             string
	cache              *Disk
	cacheSize          int64
	cacheMode          CacheMode
}

var lvmNameRE = regexp.MustCompile(`^[a-zA-Z0-9+_.][a-zA-Z0-9+_.-]{0,62}$`)

// validName is LVM's rule for VG and LV names, used for RAID names too
// since they become paths (/dev/md/<name>, /dev/<vg>/<lv>).
func validName(v string) bool { return lvmNameRE.MatchString(v) && v != "." && v != ".." }

func (l *layout) clean(name string) {
	avail := l.boot.Size - EFIPartitionSize
	l.bootSize = l.size("boot_size", l.p.BootSize, avail, MinBootPartitionSize, avail-MinRootPartitionSize)
	l.rootSize = l.size("root_size", l.p.RootSize, avail, MinRootPartitionSize, avail-MinBootPartitionSize)
	l.root = l.boot
	if l.p.RootDevice != "" {
		d, ok := l.disk("root_device", l.p.RootDevice, "")
		if ok {
			l.root = d
		}
	}
	if l.rootSize > 0 && EFIPartitionSize+l.bootSize+l.rootSize > l.boot.Size {
		l.e.Add("__all__", "Size of the boot partition and root partition are larger than the available space on the boot disk.")
	}
	switch name {
	case LayoutLVM:
		l.cleanLVM()
	case LayoutBcache:
		l.cleanBcache()
	}
}

// size cleans a BytesOrPercentageField; percentages are of base.
func (l *layout) size(field, v string, base, lo, hi int64) int64 {
	if v == "" {
		return 0
	}
	s, err := ParseSize(v)
	if err != nil {
		l.e.Add(field, "%s", err.Error())
		return 0
	}
	n := s.Of(base)
	if n < lo {
		l.e.Add(field, "Size is too small. Minimum size is %d.", lo)
	} else if n > hi {
		l.e.Add(field, "Size is too large. Maximum size is %d.", hi)
	}
	return n
}

// disk resolves a block device id given for field; not is a disk that
// may not be chosen (the boot disk, for a cache).
func (l *layout) disk(field, v, not string) (Disk, bool) {
	var ids []string
	for _, d := range l.m.Disks {
		if d.Name != not {
			ids = append(ids, strconv.Itoa(d.ID))
		}
	}
	slices.Sort(ids)
	id, err := strconv.Atoi(strings.TrimSpace(v))
	for _, d := range l.m.Disks {
		if err == nil && d.ID == id && d.Name != not {
			return d, true
		}
	}
	l.e.Add(field, "'%s' is not a valid %s.  It should be one of: %s.", v, field, quoteAll(ids))
	return Disk{}, false
}

func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return strings.Join(q, ", ")
}

// basic is MAAS's create_basic_layout: the boot disk's table with an ESP
// (UEFI) or bios_grub (BIOS), an optional /boot, and the root partition,
// whose name it returns.
func (l *layout) basic(c *Config, bootSize int64) string {
	bt := newTable(l.boot, GPT, l.m.Firmware != UEFI)
	if l.m.Firmware == UEFI {
		esp := bt.add(EFIPartitionSize, true, PartESP)
		c.Filesystems = append(c.Filesystems, Filesystem{Device: esp, Type: FAT32, Label: "efi", MountPoint: "/boot/efi"})
	}
	if bootSize > 0 {
		bp := bt.add(bootSize, true, PartData)
		c.Filesystems = append(c.Filesystems, Filesystem{Device: bp, Type: Ext4, Label: "boot", MountPoint: "/boot"})
	}
	rt := bt
	if l.root.Name != l.boot.Name {
		rt = newTable(l.root, GPT, false)
	}
	rootPart := rt.add(l.rootSize, false, PartData)
	if got := rt.table.Partitions[len(rt.table.Partitions)-1].Size; got < MinRootPartitionSize {
		l.e.Add("__all__", "Disk %s (%s) is too small for this layout: %s is left for the root filesystem and it needs at least %s.",
			l.root.Name, Human(l.root.Size), Human(got), Human(MinRootPartitionSize))
	}
	c.Tables = append(c.Tables, bt.table)
	if rt != bt {
		c.Tables = append(c.Tables, rt.table)
	}
	return rootPart
}

func (l *layout) flat(c *Config) {
	root := l.basic(c, l.bootSize)
	c.Filesystems = append(c.Filesystems, Filesystem{Device: root, Type: Ext4, Label: "root", MountPoint: "/"})
}

// Human writes a size the way an operator reads it: 3.0 GiB.
func Human(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f, i = f/1024, i+1
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// DefaultBootDisk is MAAS's boot disk for disks when none is set: the
// first (by id) big enough for a boot partition, or "".
func DefaultBootDisk(disks []Disk) string {
	d, _ := Machine{Disks: disks}.bootDisk()
	return d.Name
}
