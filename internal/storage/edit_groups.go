package storage

import (
	"fmt"
	"slices"
	"strconv"
)

// AddPartition adds a partition of size (MAAS's bytes or percentage of
// the disk; "" for the rest) to disk, making a GPT table (with bios_grub
// on a BIOS boot disk) when the disk has none. It returns the partition's
// name.
func AddPartition(c Config, fw Firmware, disk, size string, bootable bool) (Config, string, error) {
	d, ok := c.Disk(disk)
	if !ok {
		return c, "", badRequest("Cannot create a partition on %s: only physical disks are partitioned.", disk)
	}
	if _, hasTable := c.Table(disk); !hasTable {
		if u := c.inUse(disk); u != "" {
			return c, "", badRequest("Cannot create a partition on %s: it is used as %s.", disk, u)
		}
	}
	c = c.clone()
	b := c.builder(d, fw)
	free := b.available()
	want := free
	if size != "" {
		s, err := ParseSize(size)
		if err != nil {
			return c, "", fieldErr("size", "%s", err.Error())
		}
		want = RoundDown(s.Of(d.Size), PartitionAlignment)
	}
	switch {
	case free < MinPartitionSize:
		return c, "", fieldErr("size", "There is no space left on %s for a partition.", disk)
	case want < MinPartitionSize:
		return c, "", fieldErr("size", "Partition size is too small. Minimum size is %d.", MinPartitionSize)
	case want > free:
		return c, "", fieldErr("size", "Partition size is too large. Maximum size is %d.", free)
	}
	name := b.add(want, bootable, PartData)
	if i := slices.IndexFunc(c.Tables, func(t PartitionTable) bool { return t.Disk == disk }); i >= 0 {
		c.Tables[i] = b.table
	} else {
		c.Tables = append(c.Tables, b.table)
	}
	return c.WithIDs(), name, nil
}

// builder continues the table on d, or starts one.
func (c Config) builder(d Disk, fw Firmware) *tableBuilder {
	t, ok := c.Table(d.Name)
	if !ok {
		return newTable(d, GPT, fw != UEFI && d.Name == c.BootDisk)
	}
	b := &tableBuilder{disk: d, table: t, overhead: InitialPartitionOffset + EndOfTableSpace, next: InitialPartitionOffset}
	for _, p := range t.Partitions {
		if p.Type == PartBIOSGrub {
			b.overhead += BIOSGrubSize
		} else {
			b.next = max(b.next, p.Offset+p.Size)
		}
	}
	return b
}

// DeletePartition removes an unused partition.
func DeletePartition(c Config, name string) (Config, error) {
	if u := c.groupUse(name); u != "" {
		return c, badRequest("Cannot delete partition %s: it is in use (%s); remove it from its RAID, volume group or cache first.", name, u)
	}
	c = c.clone()
	for i, t := range c.Tables {
		j := slices.IndexFunc(t.Partitions, func(p Partition) bool { return PartitionName(t.Disk, p.Number) == name })
		if j < 0 {
			continue
		}
		c.Tables[i].Partitions = slices.Delete(c.Tables[i].Partitions, j, j+1)
		if k := c.fsIndex(name); k >= 0 {
			c.Filesystems = slices.Delete(c.Filesystems, k, k+1)
		}
		return c, nil
	}
	return c, fmt.Errorf("no partition %s", name)
}

// needFree refuses devices already serving a purpose, for field.
func (c Config) needFree(e FieldErrors, field string, devs []string) {
	for _, d := range devs {
		if u := c.inUse(d); u != "" {
			e.Add(field, "%s is already in use as %s.", d, u)
		}
	}
}

func (c Config) nameTaken(name string) bool {
	all, err := c.Devices()
	if err != nil {
		return false
	}
	_, ok := all[name]
	return ok || slices.ContainsFunc(c.VolumeGroups, func(v VolumeGroup) bool { return v.Name == name }) ||
		slices.ContainsFunc(c.CacheSets, func(s CacheSet) bool { return s.Name == name })
}

func nextName(prefix string, taken func(string) bool) string {
	for i := 0; ; i++ {
		if n := prefix + strconv.Itoa(i); !taken(n) {
			return n
		}
	}
}

// raidRule is MAAS's sentence for each level's members and spares.
var raidRule = map[RAIDLevel]string{
	RAID0:  "RAID level 0 must have at least 2 raid devices and no spares.",
	RAID1:  "RAID level 1 must have at least 2 raid devices and any number of spares.",
	RAID5:  "RAID level 5 must have at least 3 raid devices and any number of spares.",
	RAID6:  "RAID level 6 must have at least 4 raid devices and any number of spares.",
	RAID10: "RAID level 10 must have at least 3 raid devices and any number of spares.",
}

// CreateRAID makes an md array; name "" takes the next mdN.
func CreateRAID(c Config, name string, level RAIDLevel, devices, spares []string) (Config, error) {
	e := FieldErrors{}
	if _, ok := raidRule[level]; !ok {
		e.Add("level", "Select a valid choice. %s is not one of the available choices.", level)
		return c, e
	}
	if name == "" {
		name = nextName("md", c.nameTaken)
	} else if !validName(name) {
		e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", name)
	} else if c.nameTaken(name) {
		e.Add("name", "A device named %s already exists.", name)
	}
	c.needFree(e, "block_devices", devices)
	c.needFree(e, "spare_devices", spares)
	if n := raidMinimum[level]; len(devices) < n || (level == RAID0 && len(spares) > 0) {
		e.Add("__all__", "%s", raidRule[level])
	}
	if err := e.Err(); err != nil {
		return c, err
	}
	c = c.clone()
	c.RAIDs = append(c.RAIDs, RAID{Name: name, Level: level, Devices: devices, Spares: spares})
	return c.WithIDs(), nil
}

// usedAbove refuses removing dev while something is built on it.
func (c Config) usedAbove(dev, what string) error {
	if u := c.groupUse(dev); u != "" {
		return badRequest("Cannot delete %s: %s is in use (%s).", what, dev, u)
	}
	return nil
}

// DeleteRAID removes a RAID and its filesystem; one built upon is refused.
func DeleteRAID(c Config, name string) (Config, error) {
	if err := c.usedAbove(name, "RAID "+name); err != nil {
		return c, err
	}
	c = c.clone()
	c.RAIDs = slices.DeleteFunc(c.RAIDs, func(r RAID) bool { return r.Name == name })
	c.dropFS(name)
	return c, nil
}

func (c *Config) dropFS(devs ...string) {
	c.Filesystems = slices.DeleteFunc(c.Filesystems, func(f Filesystem) bool { return f.Device != "" && slices.Contains(devs, f.Device) })
}

// CreateVG makes a volume group over devices.
func CreateVG(c Config, name string, devices []string) (Config, error) {
	e := FieldErrors{}
	switch {
	case name == "":
		e.Add("name", "This field is required.")
	case !validName(name):
		e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", name)
	case c.nameTaken(name):
		e.Add("name", "Volume group with this name already exists.")
	}
	if len(devices) == 0 {
		e.Add("__all__", "At least one valid block device or partition is required.")
	}
	c.needFree(e, "block_devices", devices)
	if err := e.Err(); err != nil {
		return c, err
	}
	c = c.clone()
	c.VolumeGroups = append(c.VolumeGroups, VolumeGroup{Name: name, Devices: devices})
	return c.WithIDs(), nil
}

// DeleteVG removes a volume group, its logical volumes and their
// filesystems; one whose volumes are built upon is refused.
func DeleteVG(c Config, name string) (Config, error) {
	i := slices.IndexFunc(c.VolumeGroups, func(v VolumeGroup) bool { return v.Name == name })
	if i < 0 {
		return c, fmt.Errorf("no volume group %s", name)
	}
	var lvs []string
	for _, lv := range c.VolumeGroups[i].Volumes {
		n := LVName(name, lv.Name)
		if err := c.usedAbove(n, "volume group "+name); err != nil {
			return c, err
		}
		lvs = append(lvs, n)
	}
	c = c.clone()
	c.VolumeGroups = slices.Delete(c.VolumeGroups, i, i+1)
	c.dropFS(lvs...)
	return c, nil
}

// VGFree is what is left in volume group name for new logical volumes.
func (c Config) VGFree(name string) int64 {
	devs, err := c.Devices()
	if err != nil {
		return 0
	}
	for _, vg := range c.VolumeGroups {
		if vg.Name == name {
			free := VGSize(vg, devs)
			for _, lv := range vg.Volumes {
				free -= lv.Size
			}
			return max(free, 0)
		}
	}
	return 0
}

// CreateLV makes a logical volume of size ("" for all that is free) in
// volume group vg, rounded down to whole 4 MiB extents.
func CreateLV(c Config, vg, name, size string) (Config, string, error) {
	i := slices.IndexFunc(c.VolumeGroups, func(v VolumeGroup) bool { return v.Name == vg })
	if i < 0 {
		return c, "", fmt.Errorf("no volume group %s", vg)
	}
	e := FieldErrors{}
	if name == "" {
		e.Add("name", "This field is required.")
	} else if !validName(name) {
		e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", name)
	} else if c.nameTaken(LVName(vg, name)) || slices.ContainsFunc(c.VolumeGroups[i].Volumes, func(l LogicalVolume) bool { return l.Name == name }) {
		e.Add("name", "A logical volume named %s already exists in %s.", name, vg)
	}
	free := RoundDown(c.VGFree(vg), LVMExtentSize)
	want := free
	if size != "" {
		s, err := ParseSize(size)
		if err != nil {
			e.Add("size", "%s", err.Error())
		} else {
			want = RoundDown(s.Of(free), LVMExtentSize)
		}
	}
	if free < LVMExtentSize {
		e.Add("size", "Volume group %s has no space left.", vg)
	} else if want < LVMExtentSize {
		e.Add("size", "Size is too small. Minimum size is %d.", LVMExtentSize)
	} else if want > free {
		e.Add("size", "Size is too large. Maximum size is %d.", free)
	}
	if err := e.Err(); err != nil {
		return c, "", err
	}
	c = c.clone()
	c.VolumeGroups[i].Volumes = append(c.VolumeGroups[i].Volumes, LogicalVolume{Name: name, Size: want})
	return c.WithIDs(), LVName(vg, name), nil
}

// DeleteLV removes the logical volume of block device id from vg.
func DeleteLV(c Config, vg string, id int) (Config, error) {
	i := slices.IndexFunc(c.VolumeGroups, func(v VolumeGroup) bool { return v.Name == vg })
	if i < 0 {
		return c, fmt.Errorf("no volume group %s", vg)
	}
	j := slices.IndexFunc(c.VolumeGroups[i].Volumes, func(l LogicalVolume) bool { return l.ID == id })
	if j < 0 {
		return c, fieldErr("id", "No logical volume with id %d in volume group %s.", id, vg)
	}
	n := LVName(vg, c.VolumeGroups[i].Volumes[j].Name)
	if err := c.usedAbove(n, "logical volume "+n); err != nil {
		return c, err
	}
	c = c.clone()
	c.VolumeGroups[i].Volumes = slices.Delete(c.VolumeGroups[i].Volumes, j, j+1)
	c.dropFS(n)
	return c, nil
}

// CreateCacheSet makes a bcache cache set on dev.
func CreateCacheSet(c Config, dev string) (Config, error) {
	e := FieldErrors{}
	if dev == "" {
		e.Add("__all__", "Either cache_device or cache_partition must be specified.")
	}
	c.needFree(e, "cache_device", []string{dev})
	if err := e.Err(); err != nil {
		return c, err
	}
	c = c.clone()
	c.CacheSets = append(c.CacheSets, CacheSet{Name: nextName("cache", c.nameTaken), Device: dev})
	return c.WithIDs(), nil
}

// DeleteCacheSet removes a cache set no bcache uses.
func DeleteCacheSet(c Config, name string) (Config, error) {
	for _, b := range c.Bcaches {
		if b.CacheSet == name {
			return c, badRequest("Cannot delete cache set: it's currently in use by %s.", b.Name)
		}
	}
	c = c.clone()
	c.CacheSets = slices.DeleteFunc(c.CacheSets, func(s CacheSet) bool { return s.Name == name })
	return c, nil
}

// CreateBcache puts backing behind cache set cacheSet.
func CreateBcache(c Config, name, backing, cacheSet string, mode CacheMode) (Config, error) {
	e := FieldErrors{}
	if name == "" {
		name = nextName("bcache", c.nameTaken)
	} else if !validName(name) {
		e.Add("name", "%q is not a valid name: use 1 to 63 letters, digits and + _ . - (not starting with -).", name)
	} else if c.nameTaken(name) {
		e.Add("name", "A device named %s already exists.", name)
	}
	if !slices.Contains([]CacheMode{WriteBack, WriteThrough, WriteAround}, mode) {
		e.Add("cache_mode", "Select a valid choice. %s is not one of the available choices.", mode)
	}
	if _, ok := c.cacheSet(cacheSet); !ok {
		e.Add("cache_set", "Bcache requires a cache_set.")
	}
	if backing == "" {
		e.Add("__all__", "Either backing_device or backing_partition must be specified.")
	}
	c.needFree(e, "backing_device", []string{backing})
	if err := e.Err(); err != nil {
		return c, err
	}
	c = c.clone()
	c.Bcaches = append(c.Bcaches, Bcache{Name: name, Backing: backing, CacheSet: cacheSet, Mode: mode})
	return c.WithIDs(), nil
}

// DeleteBcache removes a bcache and its filesystem.
func DeleteBcache(c Config, name string) (Config, error) {
	if err := c.usedAbove(name, "bcache "+name); err != nil {
		return c, err
	}
	c = c.clone()
	c.Bcaches = slices.DeleteFunc(c.Bcaches, func(b Bcache) bool { return b.Name == name })
	c.dropFS(name)
	return c, nil
}

// ResizeLV sets logical volume name's size (a block device name such as
// vgroot-lvroot), rounded down to whole extents, as MAAS's virtual block
// device update does: it may grow into the group's free space and shrink
// to one extent. The filesystem on it is made at deploy, so nothing else
// changes.
func ResizeLV(c Config, name string, size int64) (Config, error) {
	for i, vg := range c.VolumeGroups {
		for j, lv := range vg.Volumes {
			if LVName(vg.Name, lv.Name) != name {
				continue
			}
			want := RoundDown(size, LVMExtentSize)
			if want < LVMExtentSize {
				return c, fieldErr("size", "Size is too small. Minimum size is %d.", LVMExtentSize)
			}
			if room := RoundDown(c.VGFree(vg.Name), LVMExtentSize) + lv.Size; want > room {
				return c, fieldErr("__all__", "There is not enough free space (%s) on volume group %s.", Human(want), vg.Name)
			}
			c = c.clone()
			c.VolumeGroups[i].Volumes[j].Size = want
			return c, nil
		}
	}
	return c, fieldErr("size", "Size cannot be changed on this device.")
}
