package storage

import (
	"errors"
	"strings"
	"testing"
)

// twoDisks is a UEFI RAID-1 machine: ESP on sda, /boot on md0 (RAID 1 of
// sda-part2 and sdb-part2), LVM on md1 for / and swap.
func twoDisks() Config {
	d1 := Disk{ID: 1, Name: "sda", Size: 20 * GiB, BlockSize: 512}
	d2 := Disk{ID: 2, Name: "sdb", Size: 20 * GiB, BlockSize: 512}
	tbl := func(disk string, esp bool) PartitionTable {
		first := part(1, 4*MiB, 512*MiB, esp, PartESP)
		if !esp {
			first.Type = PartData
		}
		return PartitionTable{Disk: disk, Type: GPT, Partitions: []Partition{
			first, part(2, 516*MiB, GiB, false, PartData), part(3, 516*MiB+GiB, 18*GiB, false, PartData)}}
	}
	return Config{BootDisk: "sda", Disks: []Disk{d1, d2},
		Tables: []PartitionTable{tbl("sda", true), tbl("sdb", false)},
		RAIDs: []RAID{{Name: "md0", Level: RAID1, Devices: []string{"sda-part2", "sdb-part2"}},
			{Name: "md1", Level: RAID1, Devices: []string{"sda-part3", "sdb-part3"}}},
		VolumeGroups: []VolumeGroup{{Name: "vg0", Devices: []string{"md1"}, Volumes: []LogicalVolume{{Name: "root", Size: 16 * GiB}, {Name: "swap", Size: GiB}}}},
		Filesystems: []Filesystem{
			{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"},
			{Device: "md0", Type: Ext4, Label: "boot", MountPoint: "/boot"},
			{Device: "vg0-root", Type: Ext4, Label: "root", MountPoint: "/"},
			{Device: "vg0-swap", Type: Swap},
			{Type: Tmpfs, MountPoint: "/tmp", MountOptions: "size=512m"},
		}}
}

func TestValidateAccepts(t *testing.T) {
	if err := Validate(twoDisks(), UEFI); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRefuses(t *testing.T) {
	tests := []struct {
		name   string
		fw     Firmware
		change func(c *Config)
		want   string
	}{
		{"no root filesystem", UEFI, func(c *Config) { c.Filesystems[2].MountPoint = "/srv" }, "no filesystem is mounted at /"},
		{"root on vfat", UEFI, func(c *Config) { c.Filesystems[2].Type = VFAT }, "/ is vfat; the root filesystem must be"},
		{"no ESP on UEFI", UEFI, func(c *Config) { c.Filesystems[0].MountPoint = "" }, "no EFI system partition"},
		{"ESP not FAT", UEFI, func(c *Config) { c.Filesystems[0].Type = Ext4 }, "reads only FAT"},
		{"ESP on RAID", UEFI, func(c *Config) {
			c.Filesystems[0].Device, c.Filesystems[1].Device = "md0", "sda-part1"
		}, "EFI system partition is on raid md0"},
		{"/boot on RAID 5", UEFI, func(c *Config) {
			c.Tables[1].Partitions = append(c.Tables[1].Partitions, part(4, 516*MiB+19*GiB, 512*MiB, false, PartData))
			c.RAIDs[0].Level, c.RAIDs[0].Devices = RAID5, append(c.RAIDs[0].Devices, "sdb-part4")
		}, "/boot is on RAID md0 (raid-5)"},
		{"/ on RAID 0 without /boot", UEFI, func(c *Config) {
			c.RAIDs[1].Level = RAID0
			c.Filesystems[1].MountPoint = "/srv"
		}, "/ (there is no separate /boot) is on RAID md1 (raid-0)"},
		{"/boot on bcache", UEFI, func(c *Config) {
			c.CacheSets = []CacheSet{{Name: "cache0", Device: "sdb-part1"}}
			c.Bcaches = []Bcache{{Name: "bcache0", Backing: "md0", CacheSet: "cache0", Mode: WriteBack}}
			c.Filesystems[1].Device = "bcache0"
		}, "bcache bcache0, which GRUB cannot read"},
		{"BIOS GPT without bios_grub", BIOS, func(c *Config) {}, "no bios_grub partition"},
		{"partition past the end of its disk", UEFI, func(c *Config) { c.Tables[0].Partitions[2].Size = 19 * GiB }, "sda-part3 ends at"},
		{"overlapping partitions", UEFI, func(c *Config) { c.Tables[1].Partitions[1].Offset = 400 * MiB }, "partitions sdb-part1 and sdb-part2 overlap"},
		{"filesystem on a RAID member", UEFI, func(c *Config) {
			c.Filesystems = append(c.Filesystems, Filesystem{Device: "sdb-part2", Type: Ext4, MountPoint: "/data"})
		}, "sdb-part2 is used twice: as a member of RAID md0 and as a ext4 filesystem"},
		{"filesystem on a PV", UEFI, func(c *Config) {
			c.Filesystems = append(c.Filesystems, Filesystem{Device: "md1", Type: XFS, MountPoint: "/data"})
		}, "md1 is used twice: as a physical volume of vg0 and as a xfs filesystem"},
		{"two filesystems with one mount point", UEFI, func(c *Config) { c.Filesystems[4].MountPoint = "/boot" }, "two filesystems are mounted at /boot"},
		{"more than 4 primary partitions on MBR", BIOS, func(c *Config) {
			t := &c.Tables[1]
			t.Type = MBR
			for n := 4; n <= 5; n++ {
				t.Partitions = append(t.Partitions, part(n, 516*MiB+19*GiB+int64(n-4)*100*MiB, 100*MiB, false, PartData))
			}
		}, "MBR holds at most 4 primary partitions"},
		{"RAID of one disk", UEFI, func(c *Config) { c.RAIDs[0].Devices = c.RAIDs[0].Devices[:1] }, "raid-1 must have at least 2 raid devices, it has 1"},
		{"LVs larger than the VG", UEFI, func(c *Config) { c.VolumeGroups[0].Volumes[0].Size = 18 * GiB }, "its logical volumes need"},
		{"unknown member", UEFI, func(c *Config) { c.RAIDs[0].Devices[1] = "sdc-part2" }, `no such device "sdc-part2"`},
		{"mount point not absolute", UEFI, func(c *Config) { c.Filesystems[4].MountPoint = "tmp" }, "must be an absolute path"},
		{"RAID name that is a path", UEFI, func(c *Config) { c.RAIDs[0].Name, c.Filesystems[1].Device = "..", ".." }, `RAID name ".." is not`},
		{"tmpfs on a device", UEFI, func(c *Config) { c.Filesystems[4].Device = "sdb-part1" }, "memory filesystem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := twoDisks()
			tt.change(&c)
			err := Validate(c, tt.fw)
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant it to say %q", err, tt.want)
			}
		})
	}
}
