package storage

import (
	"slices"
	"strconv"
)

// Firmware is how the machine boots; it decides the ESP and bios_grub.
type Firmware string

const (
	BIOS Firmware = "bios"
	UEFI Firmware = "uefi"
)

// Disk is a physical block device as commissioning found it.
type Disk struct {
	ID        int      `json:"id"`
	Name      string   `json:"name"` // kernel name: sda, vda, nvme0n1
	Model     string   `json:"model,omitempty"`
	Serial    string   `json:"serial,omitempty"`
	IDPath    string   `json:"id_path,omitempty"` // /dev/disk/by-id/...
	Size      int64    `json:"size"`
	BlockSize int      `json:"block_size"`
	Tags      []string `json:"tags,omitempty"` // ssd, rotary, removable, ...
	NUMANode  int      `json:"numa_node"`
}

// HasTags says whether the disk carries every one of tags.
func (d Disk) HasTags(tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(d.Tags, t) {
			return false
		}
	}
	return true
}

// TableType is a partition table's kind.
type TableType string

const (
	GPT TableType = "GPT"
	MBR TableType = "MBR"
)

// PartitionType marks the partitions firmware and loaders look for.
type PartitionType string

const (
	PartData     PartitionType = ""
	PartESP      PartitionType = "esp"       // EFI system partition
	PartBIOSGrub PartitionType = "bios_grub" // GRUB's core image on BIOS/GPT
)

// PartitionTable is the table on one disk (named by Disk.Name).
type PartitionTable struct {
	Disk       string      `json:"disk"`
	Type       TableType   `json:"type"`
	Partitions []Partition `json:"partitions"`
}

// Partition is one entry of a table; offsets and sizes are bytes.
type Partition struct {
	ID       int           `json:"id,omitempty"` // the store's id, for storage= matches
	Number   int           `json:"number"`
	Offset   int64         `json:"offset"`
	Size     int64         `json:"size"`
	Bootable bool          `json:"bootable,omitempty"`
	Type     PartitionType `json:"type,omitempty"`
	Tags     []string      `json:"tags,omitempty"`
	UUID     string        `json:"uuid,omitempty"` // MAAS's partition uuid, made with the partition
}

// PartitionName is MAAS's name for partition n of disk: sda-part2.
func PartitionName(disk string, n int) string { return disk + "-part" + strconv.Itoa(n) }

// RAIDLevel uses MAAS's names.
type RAIDLevel string

const (
	RAID0  RAIDLevel = "raid-0"
	RAID1  RAIDLevel = "raid-1"
	RAID5  RAIDLevel = "raid-5"
	RAID6  RAIDLevel = "raid-6"
	RAID10 RAIDLevel = "raid-10"
)

// RAID is an md array over devices (disks, partitions) with spares.
type RAID struct {
	ID       int       `json:"id,omitempty"`        // raids/{id}
	DeviceID int       `json:"device_id,omitempty"` // its block device's id
	Name     string    `json:"name"`                // md0
	Level    RAIDLevel `json:"level"`
	Devices  []string  `json:"devices"`
	Spares   []string  `json:"spares,omitempty"`
	// UUID is the array's, DeviceUUID its block device's: MAAS makes
	// each with the object.
	UUID       string `json:"uuid,omitempty"`
	DeviceUUID string `json:"device_uuid,omitempty"`
}

// VolumeGroup is an LVM volume group over physical volumes.
type VolumeGroup struct {
	ID      int             `json:"id,omitempty"`
	Name    string          `json:"name"`
	Devices []string        `json:"devices"` // the physical volumes
	Volumes []LogicalVolume `json:"volumes,omitempty"`
	UUID    string          `json:"uuid,omitempty"`
}

// LogicalVolume lives in a volume group; its device is named VG-LV.
type LogicalVolume struct {
	ID   int    `json:"id,omitempty"` // its block device's id
	Name string `json:"name"`
	Size int64  `json:"size"`
	UUID string `json:"uuid,omitempty"`
}

// LVName is MAAS's device name for a logical volume: vgroot-lvroot.
func LVName(vg, lv string) string { return vg + "-" + lv }

// CacheMode is bcache's write policy.
type CacheMode string

const (
	WriteBack    CacheMode = "writeback"
	WriteThrough CacheMode = "writethrough"
	WriteAround  CacheMode = "writearound"
)

// CacheSet is a bcache cache device.
type CacheSet struct {
	ID     int    `json:"id,omitempty"`
	Name   string `json:"name"` // cache0
	Device string `json:"device"`
	UUID   string `json:"uuid,omitempty"` // the set's UUID, which backing devices attach by
}

// Bcache is a backing device fronted by a cache set.
type Bcache struct {
	ID       int       `json:"id,omitempty"`        // bcaches/{id}
	DeviceID int       `json:"device_id,omitempty"` // its block device's id
	Name     string    `json:"name"`                // bcache0
	Backing  string    `json:"backing"`
	CacheSet string    `json:"cache_set"`
	Mode     CacheMode `json:"cache_mode"`
	// UUID is the bcache's, DeviceUUID its block device's.
	UUID       string `json:"uuid,omitempty"`
	DeviceUUID string `json:"device_uuid,omitempty"`
}

// FSType uses MAAS's filesystem names.
type FSType string

const (
	Ext2  FSType = "ext2"
	Ext4  FSType = "ext4"
	XFS   FSType = "xfs"
	Btrfs FSType = "btrfs"
	FAT32 FSType = "fat32"
	VFAT  FSType = "vfat"
	Swap  FSType = "swap"
	Tmpfs FSType = "tmpfs"
	Ramfs FSType = "ramfs"
)

// Special reports the filesystems that live in memory, not on a device.
func (t FSType) Special() bool { return t == Tmpfs || t == Ramfs }

// Known reports whether Anvil can make and mount t.
func (t FSType) Known() bool {
	switch t {
	case Ext2, Ext4, XFS, Btrfs, FAT32, VFAT, Swap, Tmpfs, Ramfs:
		return true
	}
	return false
}

// Filesystem is formatted on Device (empty for tmpfs and ramfs) and
// mounted at MountPoint (empty: formatted, not mounted; "none" for swap).
type Filesystem struct {
	Device       string `json:"device,omitempty"`
	Type         FSType `json:"fstype"`
	Label        string `json:"label,omitempty"`
	UUID         string `json:"uuid,omitempty"`
	MountPoint   string `json:"mount_point,omitempty"`
	MountOptions string `json:"mount_options,omitempty"`
}

// Config is a machine's whole storage configuration. Devices refer to
// each other by name: a disk's Name, PartitionName, a RAID's Name, LVName,
// a Bcache's Name.
type Config struct {
	Layout       string           `json:"layout,omitempty"` // the layout that made it; "" when custom
	BootDisk     string           `json:"boot_disk"`
	Disks        []Disk           `json:"disks"`
	Tables       []PartitionTable `json:"partition_tables,omitempty"`
	RAIDs        []RAID           `json:"raids,omitempty"`
	VolumeGroups []VolumeGroup    `json:"volume_groups,omitempty"`
	CacheSets    []CacheSet       `json:"cache_sets,omitempty"`
	Bcaches      []Bcache         `json:"bcaches,omitempty"`
	Filesystems  []Filesystem     `json:"filesystems,omitempty"`
	// NextID is the next id WithIDs hands out. Ids are the API's: stable
	// across edits (clients keep them) and never reused within a machine.
	NextID int `json:"next_id,omitempty"`
}

// Disk returns the disk named name.
func (c Config) Disk(name string) (Disk, bool) {
	for _, d := range c.Disks {
		if d.Name == name {
			return d, true
		}
	}
	return Disk{}, false
}

// Table returns the partition table on disk.
func (c Config) Table(disk string) (PartitionTable, bool) {
	for _, t := range c.Tables {
		if t.Disk == disk {
			return t, true
		}
	}
	return PartitionTable{}, false
}

// FilesystemAt returns the filesystem mounted at mount point mp.
func (c Config) FilesystemAt(mp string) (Filesystem, bool) {
	for _, f := range c.Filesystems {
		if f.MountPoint == mp {
			return f, true
		}
	}
	return Filesystem{}, false
}
