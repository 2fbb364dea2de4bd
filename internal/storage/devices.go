package storage

import (
	"fmt"
	"strings"
)

// DeviceKind says what a named device is.
type DeviceKind string

const (
	KindDisk      DeviceKind = "disk"
	KindPartition DeviceKind = "partition"
	KindRAID      DeviceKind = "raid"
	KindLV        DeviceKind = "logical volume"
	KindBcache    DeviceKind = "bcache"
)

// Device is a block device of a configuration, physical or built.
type Device struct {
	Name    string
	Kind    DeviceKind
	Size    int64
	Parents []string  // what it is built on: its disk, RAID members, PVs, backing
	Level   RAIDLevel // for RAIDs
	VG      string    // for logical volumes
}

// Devices resolves every block device of c by name. Names must be unique
// and every reference must resolve; the order of c's lists does not matter
// (a RAID may sit on LVs and a VG on RAIDs, but not in a cycle).
func (c Config) Devices() (map[string]Device, error) {
	devs, err := c.physical()
	if err != nil {
		return nil, err
	}
	add := func(d Device) error { return addDevice(devs, d) }
	order, err := c.buildOrder(devs)
	if err != nil {
		return nil, err
	}
	for _, b := range order {
		for _, d := range b.devices(c, devs) {
			if err := add(d); err != nil {
				return nil, err
			}
		}
	}
	for _, cs := range c.CacheSets {
		if _, ok := devs[cs.Device]; !ok {
			return nil, fmt.Errorf("cache set %s: no such device %q", cs.Name, cs.Device)
		}
	}
	return devs, nil
}

func addDevice(devs map[string]Device, d Device) error {
	if _, dup := devs[d.Name]; dup {
		return fmt.Errorf("device name %q is used twice", d.Name)
	}
	devs[d.Name] = d
	return nil
}

// physical resolves the disks and their partitions.
func (c Config) physical() (map[string]Device, error) {
	devs := map[string]Device{}
	add := func(d Device) error { return addDevice(devs, d) }
	for _, d := range c.Disks {
		if err := add(Device{Name: d.Name, Kind: KindDisk, Size: d.Size}); err != nil {
			return nil, err
		}
	}
	for _, t := range c.Tables {
		if _, ok := devs[t.Disk]; !ok {
			return nil, fmt.Errorf("partition table on %q: no such disk", t.Disk)
		}
		for _, p := range t.Partitions {
			if err := add(Device{Name: PartitionName(t.Disk, p.Number), Kind: KindPartition, Size: p.Size, Parents: []string{t.Disk}}); err != nil {
				return nil, err
			}
		}
	}
	return devs, nil
}

// built is a RAID, volume group or bcache, by index into its list.
type built struct {
	kind DeviceKind // KindRAID, KindLV (a volume group), KindBcache
	i    int
}

// members are the devices b is made of.
func (b built) members(c Config) []string {
	switch b.kind {
	case KindRAID:
		return append(append([]string{}, c.RAIDs[b.i].Devices...), c.RAIDs[b.i].Spares...)
	case KindLV:
		return c.VolumeGroups[b.i].Devices
	}
	m := []string{c.Bcaches[b.i].Backing}
	if cs, ok := c.cacheSet(c.Bcaches[b.i].CacheSet); ok {
		m = append(m, cs.Device)
	}
	return m
}

// devices are what b makes, given its members' devices.
func (b built) devices(c Config, devs map[string]Device) []Device {
	switch b.kind {
	case KindRAID:
		r := c.RAIDs[b.i]
		return []Device{{Name: r.Name, Kind: KindRAID, Size: raidSize(r, devs), Parents: b.members(c), Level: r.Level}}
	case KindLV:
		vg := c.VolumeGroups[b.i]
		var out []Device
		for _, lv := range vg.Volumes {
			out = append(out, Device{Name: LVName(vg.Name, lv.Name), Kind: KindLV, Size: lv.Size, Parents: vg.Devices, VG: vg.Name})
		}
		return out
	}
	bc := c.Bcaches[b.i]
	return []Device{{Name: bc.Name, Kind: KindBcache, Size: devs[bc.Backing].Size, Parents: b.members(c)}}
}

// buildOrder orders the built devices so each comes after its members:
// they may stack in any order (RAID under LVM, LVM under RAID) but not in
// a cycle. devs holds the disks and partitions; it is not changed.
func (c Config) buildOrder(base map[string]Device) ([]built, error) {
	have := map[string]bool{}
	for n := range base {
		have[n] = true
	}
	var todo []built
	for i := range c.RAIDs {
		todo = append(todo, built{KindRAID, i})
	}
	for i := range c.VolumeGroups {
		todo = append(todo, built{KindLV, i})
	}
	for i, b := range c.Bcaches {
		if _, ok := c.cacheSet(b.CacheSet); !ok {
			return nil, fmt.Errorf("bcache %s: no cache set %q", b.Name, b.CacheSet)
		}
		todo = append(todo, built{KindBcache, i})
	}
	var order []built
	for len(todo) > 0 {
		var left []built
		for _, b := range todo {
			ready := true
			for _, m := range b.members(c) {
				ready = ready && have[m]
			}
			if !ready {
				left = append(left, b)
				continue
			}
			order = append(order, b)
			for _, d := range b.devices(c, nil) {
				have[d.Name] = true
			}
		}
		if len(left) == len(todo) {
			return nil, fmt.Errorf("%s", c.unresolved(left[0], have))
		}
		todo = left
	}
	return order, nil
}

func (c Config) cacheSet(name string) (CacheSet, bool) {
	for _, cs := range c.CacheSets {
		if cs.Name == name {
			return cs, true
		}
	}
	return CacheSet{}, false
}

// unresolved says why b cannot be built.
func (c Config) unresolved(b built, have map[string]bool) string {
	what := map[DeviceKind]string{KindRAID: "RAID ", KindLV: "volume group ", KindBcache: "bcache "}[b.kind]
	switch b.kind {
	case KindRAID:
		what += c.RAIDs[b.i].Name
	case KindLV:
		what += c.VolumeGroups[b.i].Name
	default:
		what += c.Bcaches[b.i].Name
	}
	for _, m := range b.members(c) {
		if !have[m] {
			return fmt.Sprintf("%s: no such device %q (or the devices refer to each other in a cycle)", what, m)
		}
	}
	return what + ": the devices refer to each other in a cycle"
}

// raidSize is MAAS's get_raid_size: the smallest member decides, less the
// superblock.
func raidSize(r RAID, devs map[string]Device) int64 {
	if len(r.Devices) == 0 {
		return 0
	}
	minSize, total := devs[r.Devices[0]].Size, int64(0)
	for _, n := range r.Devices {
		minSize = min(minSize, devs[n].Size)
		total += devs[n].Size
	}
	n := int64(len(r.Devices))
	switch r.Level {
	case RAID0:
		return total - RAIDSuperblockOverhead*n
	case RAID1:
		return minSize - RAIDSuperblockOverhead
	case RAID5:
		return minSize*(n-1) - RAIDSuperblockOverhead
	case RAID6:
		return minSize*(n-2) - RAIDSuperblockOverhead
	case RAID10:
		return minSize*n/2 - RAIDSuperblockOverhead
	}
	return 0
}

// VGSize is MAAS's volume group size: the PVs' extents, less one extent
// per PV for LVM's headers.
func VGSize(vg VolumeGroup, devs map[string]Device) int64 {
	var total int64
	for _, n := range vg.Devices {
		total += devs[n].Size
	}
	return (total/LVMExtentSize - int64(len(vg.Devices))) * LVMExtentSize
}

// uses says, for each device that serves a purpose, what it serves as.
func (c Config) uses() map[string][]string {
	uses := map[string][]string{}
	use := func(what string, devs ...string) {
		for _, d := range devs {
			uses[d] = append(uses[d], what)
		}
	}
	for _, t := range c.Tables {
		use("a partition table", t.Disk)
	}
	for _, a := range c.RAIDs {
		use("a member of RAID "+a.Name, a.Devices...)
		use("a spare of RAID "+a.Name, a.Spares...)
	}
	for _, vg := range c.VolumeGroups {
		use("a physical volume of "+vg.Name, vg.Devices...)
	}
	for _, b := range c.Bcaches {
		use("the backing device of "+b.Name, b.Backing)
	}
	for _, cs := range c.CacheSets {
		use("the cache of "+cs.Name, cs.Device)
	}
	for _, f := range c.Filesystems {
		if f.Device != "" {
			use(fmt.Sprintf("a %s filesystem", strings.ToLower(string(f.Type))), f.Device)
		}
	}
	return uses
}
