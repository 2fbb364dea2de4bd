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
	devs := map[string]Device{}
	add := func(d Device) error {
		if _, dup := devs[d.Name]; dup {
			return fmt.Errorf("device name %q is used twice", d.Name)
		}
		devs[d.Name] = d
		return nil
	}
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
	// Built devices may stack in any order: resolve until nothing changes.
	pending := len(c.RAIDs) + len(c.VolumeGroups) + len(c.Bcaches)
	done := map[string]bool{}
	for pending > 0 {
		progress := false
		for _, r := range c.RAIDs {
			if done["raid:"+r.Name] || !all(devs, r.Devices, r.Spares) {
				continue
			}
			if err := add(Device{Name: r.Name, Kind: KindRAID, Size: raidSize(r, devs), Parents: append(append([]string{}, r.Devices...), r.Spares...), Level: r.Level}); err != nil {
				return nil, err
			}
			done["raid:"+r.Name], progress = true, true
			pending--
		}
		for _, vg := range c.VolumeGroups {
			if done["vg:"+vg.Name] || !all(devs, vg.Devices) {
				continue
			}
			for _, lv := range vg.Volumes {
				if err := add(Device{Name: LVName(vg.Name, lv.Name), Kind: KindLV, Size: lv.Size, Parents: vg.Devices, VG: vg.Name}); err != nil {
					return nil, err
				}
			}
			done["vg:"+vg.Name], progress = true, true
			pending--
		}
		for _, b := range c.Bcaches {
			cs, ok := c.cacheSet(b.CacheSet)
			if done["bcache:"+b.Name] || !all(devs, []string{b.Backing}) || (ok && !all(devs, []string{cs.Device})) {
				continue
			}
			if !ok {
				return nil, fmt.Errorf("bcache %s: no cache set %q", b.Name, b.CacheSet)
			}
			if err := add(Device{Name: b.Name, Kind: KindBcache, Size: devs[b.Backing].Size, Parents: []string{b.Backing, cs.Device}}); err != nil {
				return nil, err
			}
			done["bcache:"+b.Name], progress = true, true
			pending--
		}
		if !progress {
			return nil, fmt.Errorf("%s", c.unresolved(devs, done))
		}
	}
	for _, cs := range c.CacheSets {
		if _, ok := devs[cs.Device]; !ok {
			return nil, fmt.Errorf("cache set %s: no such device %q", cs.Name, cs.Device)
		}
	}
	return devs, nil
}

func (c Config) cacheSet(name string) (CacheSet, bool) {
	for _, cs := range c.CacheSets {
		if cs.Name == name {
			return cs, true
		}
	}
	return CacheSet{}, false
}

// unresolved names the first built device whose members do not exist.
func (c Config) unresolved(devs map[string]Device, done map[string]bool) string {
	missing := func(names []string) string {
		for _, n := range names {
			if _, ok := devs[n]; !ok {
				return n
			}
		}
		return ""
	}
	for _, r := range c.RAIDs {
		if !done["raid:"+r.Name] {
			return fmt.Sprintf("RAID %s: no such device %q (or the devices refer to each other in a cycle)", r.Name, missing(append(append([]string{}, r.Devices...), r.Spares...)))
		}
	}
	for _, vg := range c.VolumeGroups {
		if !done["vg:"+vg.Name] {
			return fmt.Sprintf("volume group %s: no such device %q (or the devices refer to each other in a cycle)", vg.Name, missing(vg.Devices))
		}
	}
	for _, b := range c.Bcaches {
		if !done["bcache:"+b.Name] {
			return fmt.Sprintf("bcache %s: no such device %q (or the devices refer to each other in a cycle)", b.Name, b.Backing)
		}
	}
	return "devices refer to each other in a cycle"
}

func all(devs map[string]Device, lists ...[]string) bool {
	for _, l := range lists {
		for _, n := range l {
			if _, ok := devs[n]; !ok {
				return false
			}
		}
	}
	return true
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
