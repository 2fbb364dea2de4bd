package api

import (
	"fmt"
	"strconv"

	"github.com/anvilmetal/anvil/internal/storage"
)

// The storage objects as MAAS renders them (DISPLAYED_BLOCKDEVICE_FIELDS,
// _PARTITION_, _VOLUME_GROUP_, _RAID_, _BCACHE_, _CACHE_SET_FIELDS), from
// the machine's storage configuration. Sizes are bytes; human_size is
// MAAS's (powers of 1000, one decimal).

// fsJSON is a filesystem: MAAS's five keys.
type fsJSON struct {
	FSType       string  `json:"fstype"`
	Label        *string `json:"label"`
	UUID         *string `json:"uuid"`
	MountPoint   *string `json:"mount_point"`
	MountOptions *string `json:"mount_options"`
}

// partJSON is a partition.
type partJSON struct {
	ID          int64    `json:"id"`
	UUID        *string  `json:"uuid"`
	Path        string   `json:"path"`
	Type        string   `json:"type"`
	Size        int64    `json:"size"`
	Bootable    bool     `json:"bootable"`
	Filesystem  *fsJSON  `json:"filesystem"`
	UsedFor     string   `json:"used_for"`
	Tags        []string `json:"tags"`
	SystemID    string   `json:"system_id"`
	DeviceID    int64    `json:"device_id"`
	ResourceURI string   `json:"resource_uri"`
}

type vgJSON struct {
	SystemID       string      `json:"system_id"`
	ID             int64       `json:"id"`
	UUID           *string     `json:"uuid"`
	Name           string      `json:"name"`
	Devices        []any       `json:"devices"`
	Size           int64       `json:"size"`
	HumanSize      string      `json:"human_size"`
	Available      int64       `json:"available_size"`
	HumanAvailable string      `json:"human_available_size"`
	Used           int64       `json:"used_size"`
	HumanUsed      string      `json:"human_used_size"`
	LogicalVolumes []blockJSON `json:"logical_volumes"`
	ResourceURI    string      `json:"resource_uri"`
}

type raidJSON struct {
	SystemID      string    `json:"system_id"`
	ID            int64     `json:"id"`
	UUID          *string   `json:"uuid"`
	Name          string    `json:"name"`
	Level         string    `json:"level"`
	Devices       []any     `json:"devices"`
	SpareDevices  []any     `json:"spare_devices"`
	Size          int64     `json:"size"`
	HumanSize     string    `json:"human_size"`
	VirtualDevice blockJSON `json:"virtual_device"`
	ResourceURI   string    `json:"resource_uri"`
}

type cacheSetJSON struct {
	SystemID    string `json:"system_id"`
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	CacheDevice any    `json:"cache_device"`
	ResourceURI string `json:"resource_uri"`
}

type bcacheJSON struct {
	SystemID      string       `json:"system_id"`
	ID            int64        `json:"id"`
	UUID          *string      `json:"uuid"`
	Name          string       `json:"name"`
	CacheSet      cacheSetJSON `json:"cache_set"`
	BackingDevice any          `json:"backing_device"`
	Size          int64        `json:"size"`
	HumanSize     string       `json:"human_size"`
	VirtualDevice blockJSON    `json:"virtual_device"`
	CacheMode     string       `json:"cache_mode"`
	ResourceURI   string       `json:"resource_uri"`
}

// humanBytes is MAAS's human_readable_bytes.
func humanBytes(n int64) string {
	units := []string{"bytes", "KB", "MB", "GB", "TB", "PB", "EB"}
	f, i := float64(n), 0
	for f >= 1000 && i < len(units)-1 {
		f, i = f/1000, i+1
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// storageView renders one machine's configuration.
type storageView struct {
	sys  string
	c    storage.Config
	devs map[string]storage.Device
}

func newStorageView(systemID string, c storage.Config) *storageView {
	devs, err := c.Devices()
	if err != nil {
		devs = map[string]storage.Device{} // a stored configuration always resolves; render what is there
	}
	return &storageView{sys: systemID, c: c, devs: devs}
}

func (v *storageView) base() string { return Prefix + "nodes/" + v.sys + "/" }

func (v *storageView) fs(dev string) *fsJSON {
	f, ok := v.c.FilesystemOn(dev)
	if !ok {
		return nil
	}
	return renderFS(f)
}

func renderFS(f storage.Filesystem) *fsJSON {
	return &fsJSON{FSType: string(f.Type), Label: optional(f.Label), UUID: optional(f.UUID), MountPoint: optional(f.MountPoint), MountOptions: optional(f.MountOptions)}
}

// usedFor is MAAS's used_for sentence for dev.
func (v *storageView) usedFor(dev string) string {
	if t, ok := v.c.Table(dev); ok {
		n := 0
		for _, p := range t.Partitions {
			if p.Type != storage.PartBIOSGrub {
				n++
			}
		}
		s := "s"
		if n == 1 {
			s = ""
		}
		return fmt.Sprintf("%s partitioned with %d partition%s", t.Type, n, s)
	}
	if f, ok := v.c.FilesystemOn(dev); ok {
		if f.MountPoint == "" || f.MountPoint == "none" && f.Type != storage.Swap {
			return "Unmounted " + string(f.Type) + " formatted filesystem"
		}
		if f.Type == storage.Swap {
			return "swap formatted filesystem"
		}
		return fmt.Sprintf("%s formatted filesystem mounted at %s", f.Type, f.MountPoint)
	}
	for _, r := range v.c.RAIDs {
		for _, d := range r.Devices {
			if d == dev {
				return fmt.Sprintf("Active %s device for %s", r.Level, r.Name)
			}
		}
		for _, d := range r.Spares {
			if d == dev {
				return fmt.Sprintf("Spare %s device for %s", r.Level, r.Name)
			}
		}
	}
	for _, vg := range v.c.VolumeGroups {
		for _, d := range vg.Devices {
			if d == dev {
				return "LVM volume for " + vg.Name
			}
		}
	}
	for _, b := range v.c.Bcaches {
		if b.Backing == dev {
			return "Backing device for " + b.Name
		}
	}
	for _, cs := range v.c.CacheSets {
		if cs.Device == dev {
			return "Cache device for " + cs.Name
		}
	}
	return "Unused"
}

// used is how much of dev is taken: all of it when formatted or a
// member, the partitions and the table's overhead when partitioned.
func (v *storageView) used(dev string, size int64) int64 {
	if t, ok := v.c.Table(dev); ok {
		used := storage.InitialPartitionOffset + storage.EndOfTableSpace
		for _, p := range t.Partitions {
			if p.Type == storage.PartBIOSGrub {
				used += storage.BIOSGrubSize
			} else {
				used += p.Size
			}
		}
		return min(used, size)
	}
	if v.usedFor(dev) != "Unused" {
		return size
	}
	return 0
}

func (v *storageView) deviceID(dev string) int64 { return int64(v.c.BlockID(dev)) }

// block renders a block device (physical or virtual) by name.
func (v *storageView) block(dev string) blockJSON {
	id := v.deviceID(dev)
	j := blockJSON{
		ID: id, Name: dev, Type: "virtual", Path: "/dev/disk/by-dname/" + dev, Tags: []string{}, Partitions: []partJSON{},
		BlockSize: 4096, SystemID: v.sys, ResourceURI: v.base() + "blockdevices/" + itoa(id) + "/",
		Filesystem: v.fs(dev), UsedFor: v.usedFor(dev),
	}
	if d, ok := v.c.Disk(dev); ok {
		j.Type, j.Model, j.Serial, j.IDPath, j.BlockSize = "physical", d.Model, d.Serial, d.IDPath, d.BlockSize
		if j.IDPath == "" {
			j.IDPath = "/dev/" + d.Name
		}
		j.Tags = append(j.Tags, d.Tags...)
		j.Size = d.Size
	} else {
		j.Size = v.devs[dev].Size
		j.UUID = optional(v.c.DeviceUUID(dev))
	}
	if t, ok := v.c.Table(dev); ok {
		tt := string(t.Type)
		j.PartitionTableType = &tt
		for _, p := range t.Partitions {
			if p.Type != storage.PartBIOSGrub {
				j.Partitions = append(j.Partitions, v.partition(dev, p))
			}
		}
	}
	j.UsedSize = v.used(dev, j.Size)
	j.AvailableSize = j.Size - j.UsedSize
	return j
}

func (v *storageView) partition(disk string, p storage.Partition) partJSON {
	name := storage.PartitionName(disk, p.Number)
	did := v.deviceID(disk)
	return partJSON{
		ID: int64(p.ID), UUID: optional(p.UUID), Path: "/dev/disk/by-dname/" + name, Type: "partition", Size: p.Size, Bootable: p.Bootable,
		Filesystem: v.fs(name), UsedFor: v.usedFor(name), Tags: append([]string{}, p.Tags...), SystemID: v.sys, DeviceID: did,
		ResourceURI: v.base() + "blockdevices/" + itoa(did) + "/partition/" + strconv.Itoa(p.ID),
	}
}

// member renders a group's member: a partition or a block device.
func (v *storageView) member(dev string) any {
	for _, t := range v.c.Tables {
		for _, p := range t.Partitions {
			if storage.PartitionName(t.Disk, p.Number) == dev {
				return v.partition(t.Disk, p)
			}
		}
	}
	return v.block(dev)
}

func (v *storageView) members(devs []string) []any {
	out := make([]any, 0, len(devs))
	for _, d := range devs {
		out = append(out, v.member(d))
	}
	return out
}

func (v *storageView) vg(vg storage.VolumeGroup) vgJSON {
	size := storage.VGSize(vg, v.devs)
	free := v.c.VGFree(vg.Name)
	j := vgJSON{
		SystemID: v.sys, ID: int64(vg.ID), UUID: optional(vg.UUID), Name: vg.Name, Devices: v.members(vg.Devices),
		Size: size, HumanSize: humanBytes(size), Available: free, HumanAvailable: humanBytes(free),
		Used: size - free, HumanUsed: humanBytes(size - free), LogicalVolumes: []blockJSON{},
		ResourceURI: v.base() + "volume-group/" + strconv.Itoa(vg.ID) + "/",
	}
	for _, lv := range vg.Volumes {
		j.LogicalVolumes = append(j.LogicalVolumes, v.block(storage.LVName(vg.Name, lv.Name)))
	}
	return j
}

func (v *storageView) raid(r storage.RAID) raidJSON {
	size := v.devs[r.Name].Size
	return raidJSON{
		SystemID: v.sys, ID: int64(r.ID), UUID: optional(r.UUID), Name: r.Name, Level: string(r.Level),
		Devices: v.members(r.Devices), SpareDevices: v.members(r.Spares), Size: size, HumanSize: humanBytes(size),
		VirtualDevice: v.block(r.Name), ResourceURI: v.base() + "raid/" + strconv.Itoa(r.ID) + "/",
	}
}

func (v *storageView) cacheSet(cs storage.CacheSet) cacheSetJSON {
	return cacheSetJSON{SystemID: v.sys, ID: int64(cs.ID), Name: cs.Name, CacheDevice: v.member(cs.Device),
		ResourceURI: v.base() + "bcache-cache-set/" + strconv.Itoa(cs.ID) + "/"}
}

func (v *storageView) bcache(b storage.Bcache) bcacheJSON {
	j := bcacheJSON{
		SystemID: v.sys, ID: int64(b.ID), UUID: optional(b.UUID), Name: b.Name, BackingDevice: v.member(b.Backing),
		Size: v.devs[b.Name].Size, HumanSize: humanBytes(v.devs[b.Name].Size), VirtualDevice: v.block(b.Name),
		CacheMode: string(b.Mode), ResourceURI: v.base() + "bcache/" + strconv.Itoa(b.ID) + "/",
	}
	for _, cs := range v.c.CacheSets {
		if cs.Name == b.CacheSet {
			j.CacheSet = v.cacheSet(cs)
		}
	}
	return j
}

// virtual lists the virtual block devices: RAIDs, logical volumes, bcaches.
func (v *storageView) virtual() []blockJSON {
	out := []blockJSON{}
	for _, r := range v.c.RAIDs {
		out = append(out, v.block(r.Name))
	}
	for _, vg := range v.c.VolumeGroups {
		for _, lv := range vg.Volumes {
			out = append(out, v.block(storage.LVName(vg.Name, lv.Name)))
		}
	}
	for _, b := range v.c.Bcaches {
		out = append(out, v.block(b.Name))
	}
	return out
}

// fill sets the machine object's storage fields from the configuration.
func (v *storageView) fill(j *machineJSON) {
	j.PhysicalBlock, j.VirtualBlock = []blockJSON{}, v.virtual()
	var total int64
	for _, d := range v.c.Disks {
		b := v.block(d.Name)
		j.PhysicalBlock = append(j.PhysicalBlock, b)
		total += d.Size
		if d.Name == v.c.BootDisk {
			j.BootDisk = &b
		}
	}
	j.BlockDevices = append(append([]blockJSON{}, j.PhysicalBlock...), j.VirtualBlock...)
	j.Storage = float64(total) / 1e6
	j.VolumeGroups, j.RAIDs, j.CacheSets, j.BCaches, j.SpecialFilesystems = []vgJSON{}, []raidJSON{}, []cacheSetJSON{}, []bcacheJSON{}, []fsJSON{}
	for _, vg := range v.c.VolumeGroups {
		j.VolumeGroups = append(j.VolumeGroups, v.vg(vg))
	}
	for _, r := range v.c.RAIDs {
		j.RAIDs = append(j.RAIDs, v.raid(r))
	}
	for _, cs := range v.c.CacheSets {
		j.CacheSets = append(j.CacheSets, v.cacheSet(cs))
	}
	for _, b := range v.c.Bcaches {
		j.BCaches = append(j.BCaches, v.bcache(b))
	}
	for _, f := range v.c.Filesystems {
		if f.Type.Special() {
			j.SpecialFilesystems = append(j.SpecialFilesystems, *renderFS(f))
		}
	}
}
