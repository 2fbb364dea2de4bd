package ui

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anvilmetal/anvil/internal/storage"
)

// storageRow is one block device of a machine's storage configuration
// (a disk, partition, RAID, logical volume or bcache) with what it is
// used for. Path is where the storage API finds it under the machine
// (blockdevices/ID/ or blockdevices/ID/partition/ID), for the forms.
type storageRow struct {
	Name    string
	Kind    storage.DeviceKind
	Size    int64
	Path    string
	Parents []string
	Use     string
	// Partition names the partition's disk path and id, for deleting it.
	PartitionOf string
	PartitionID int
}

// machineStorage is a machine page's storage section.
type machineStorage struct {
	Config  *storage.Config
	Devices []storageRow
	// Err says why the configuration cannot be resolved (it is shown,
	// not hidden: the deploy would refuse it).
	Err     string
	Layouts []string
	FSTypes []storage.FSType
	Levels  []storage.RAIDLevel
	Modes   []storage.CacheMode
}

var kindOrder = map[storage.DeviceKind]int{storage.KindDisk: 0, storage.KindPartition: 1, storage.KindRAID: 2, storage.KindLV: 3, storage.KindBcache: 4}

func storageOf(c *storage.Config) machineStorage {
	d := machineStorage{Config: c, Layouts: storage.Layouts,
		FSTypes: []storage.FSType{storage.Ext4, storage.XFS, storage.Btrfs, storage.Ext2, storage.FAT32, storage.VFAT, storage.Swap},
		Levels:  []storage.RAIDLevel{storage.RAID0, storage.RAID1, storage.RAID5, storage.RAID6, storage.RAID10},
		Modes:   []storage.CacheMode{storage.WriteThrough, storage.WriteBack, storage.WriteAround}}
	if c == nil {
		return d
	}
	devs, err := c.Devices()
	if err != nil {
		d.Err = err.Error()
		return d
	}
	parts := map[string][2]int{} // partition name → disk id, partition id
	kinds := map[string]storage.PartitionType{}
	for _, t := range c.Tables {
		for _, p := range t.Partitions {
			parts[storage.PartitionName(t.Disk, p.Number)] = [2]int{c.BlockID(t.Disk), p.ID}
			kinds[storage.PartitionName(t.Disk, p.Number)] = p.Type
		}
	}
	for name, dev := range devs {
		row := storageRow{Name: name, Kind: dev.Kind, Size: dev.Size, Parents: dev.Parents, Use: use(*c, name)}
		if k := kinds[name]; k != storage.PartData && row.Use == "unused" {
			row.Use = string(k) // GRUB's or the firmware's, not free
		}
		if p, ok := parts[name]; ok {
			row.Path = fmt.Sprintf("blockdevices/%d/partition/%d", p[0], p[1])
			row.PartitionOf, row.PartitionID = fmt.Sprintf("blockdevices/%d", p[0]), p[1]
		} else if id := c.BlockID(name); id > 0 {
			row.Path = fmt.Sprintf("blockdevices/%d/", id)
		}
		d.Devices = append(d.Devices, row)
	}
	slices.SortFunc(d.Devices, func(a, b storageRow) int {
		return cmp.Or(cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]), naturalCompare(a.Name, b.Name))
	})
	return d
}

// use says what a device holds: its filesystem and mount point, its
// table, or the group it serves.
func use(c storage.Config, dev string) string {
	if f, ok := c.FilesystemOn(dev); ok {
		if f.MountPoint != "" && f.MountPoint != "none" {
			return fmt.Sprintf("%s at %s", f.Type, f.MountPoint)
		}
		return string(f.Type) + ", not mounted"
	}
	if t, ok := c.Table(dev); ok {
		return fmt.Sprintf("%s partition table", t.Type)
	}
	if g := c.GroupUse(dev); g != "" {
		return g
	}
	return "unused"
}

// Disks are the rows a partition can be added to.
func (d machineStorage) Disks() []storageRow {
	var out []storageRow
	for _, r := range d.Devices {
		if r.Kind == storage.KindDisk {
			out = append(out, r)
		}
	}
	return out
}

// Members are the rows a RAID or volume group can be built on, with the
// form field the API takes them in and their id there.
type member struct {
	Field, Name string
	ID          int
}

func (d machineStorage) Members() []member {
	var out []member
	for _, r := range d.Devices {
		switch {
		case r.PartitionID > 0:
			out = append(out, member{"partitions", r.Name, r.PartitionID})
		case r.Path != "":
			out = append(out, member{"block_devices", r.Name, d.Config.BlockID(r.Name)})
		}
	}
	return out
}
