package storage

import (
	"errors"
	"strings"
	"testing"
)

var (
	small = Disk{ID: 1, Name: "sda", Size: 8 * GiB, BlockSize: 512}
	big   = Disk{ID: 1, Name: "sda", Size: 2 * TiB, BlockSize: 4096, Tags: []string{"rotary"}}
	hdd   = Disk{ID: 1, Name: "sda", Size: 500 * GiB, BlockSize: 512, Tags: []string{"rotary"}}
	ssd   = Disk{ID: 2, Name: "sdb", Size: 100 * GiB, BlockSize: 512, Tags: []string{"ssd"}}
	tiny  = Disk{ID: 1, Name: "sda", Size: 3 * GiB, BlockSize: 512}
)

// part is a shorthand for the expected partitions.
func part(n int, off, size int64, boot bool, t PartitionType) Partition {
	return Partition{Number: n, Offset: off, Size: size, Bootable: boot, Type: t}
}

func TestApplyLayout(t *testing.T) {
	// What remains of a disk after MAAS's overhead, aligned down.
	rest := func(d Disk, used int64) int64 { return RoundDown(d.Size-used, PartitionAlignment) }
	bios := InitialPartitionOffset + EndOfTableSpace + BIOSGrubSize
	uefi := InitialPartitionOffset + EndOfTableSpace
	tests := []struct {
		name   string
		layout string
		m      Machine
		p      LayoutParams
		tables []PartitionTable
		fs     []Filesystem
		vgs    []VolumeGroup
		bc     []Bcache
	}{
		{name: "flat uefi small disk", layout: LayoutFlat, m: Machine{Disks: []Disk{small}, Firmware: UEFI},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, 4*MiB, EFIPartitionSize, true, PartESP),
				part(2, 4*MiB+EFIPartitionSize, rest(small, uefi+EFIPartitionSize), false, PartData)}}},
			fs: []Filesystem{{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"}, {Device: "sda-part2", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "flat bios big disk gets bios_grub", layout: LayoutFlat, m: Machine{Disks: []Disk{big}, Firmware: BIOS},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, MiB, BIOSGrubSize, false, PartBIOSGrub),
				part(2, 4*MiB, rest(big, bios), false, PartData)}}},
			fs: []Filesystem{{Device: "sda-part2", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "flat with boot and root sizes", layout: LayoutFlat, m: Machine{Disks: []Disk{hdd}, Firmware: UEFI},
			p: LayoutParams{BootSize: "1G", RootSize: "20G"},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, 4*MiB, EFIPartitionSize, true, PartESP),
				part(2, 4*MiB+EFIPartitionSize, RoundDown(1e9, 4*MiB), true, PartData),
				part(3, 4*MiB+EFIPartitionSize+RoundDown(1e9, 4*MiB), RoundDown(20e9, 4*MiB), false, PartData)}}},
			fs: []Filesystem{{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"},
				{Device: "sda-part2", Type: Ext4, Label: "boot", MountPoint: "/boot"},
				{Device: "sda-part3", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "flat root on a second disk", layout: LayoutFlat, m: Machine{Disks: []Disk{hdd, ssd}, Firmware: UEFI},
			p: LayoutParams{RootDevice: "2"},
			tables: []PartitionTable{
				{Disk: "sda", Type: GPT, Partitions: []Partition{part(1, 4*MiB, EFIPartitionSize, true, PartESP)}},
				{Disk: "sdb", Type: GPT, Partitions: []Partition{part(1, 4*MiB, rest(ssd, uefi), false, PartData)}}},
			fs: []Filesystem{{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"}, {Device: "sdb-part1", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "lvm uefi small disk", layout: LayoutLVM, m: Machine{Disks: []Disk{small}, Firmware: UEFI},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, 4*MiB, EFIPartitionSize, true, PartESP),
				part(2, 4*MiB+EFIPartitionSize, rest(small, uefi+EFIPartitionSize), false, PartData)}}},
			vgs: []VolumeGroup{{Name: "vgroot", Devices: []string{"sda-part2"}, Volumes: []LogicalVolume{{Name: "lvroot", Size: rest(small, uefi+EFIPartitionSize) - LVMExtentSize}}}},
			fs:  []Filesystem{{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"}, {Device: "vgroot-lvroot", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "lvm bios big disk named, sized", layout: LayoutLVM, m: Machine{Disks: []Disk{big}, Firmware: BIOS},
			p: LayoutParams{VGName: "vg0", LVName: "root", LVSize: "50%"},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, MiB, BIOSGrubSize, false, PartBIOSGrub),
				part(2, 4*MiB, rest(big, bios), false, PartData)}}},
			vgs: []VolumeGroup{{Name: "vg0", Devices: []string{"sda-part2"}, Volumes: []LogicalVolume{{Name: "root", Size: RoundDown((2*TiB-EFIPartitionSize)/2, LVMExtentSize)}}}},
			fs:  []Filesystem{{Device: "vg0-root", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "bcache ssd+hdd", layout: LayoutBcache, m: Machine{Disks: []Disk{hdd, ssd}, Firmware: UEFI},
			tables: []PartitionTable{
				{Disk: "sda", Type: GPT, Partitions: []Partition{
					part(1, 4*MiB, EFIPartitionSize, true, PartESP),
					part(2, 4*MiB+EFIPartitionSize, GiB, true, PartData),
					part(3, 4*MiB+EFIPartitionSize+GiB, rest(hdd, uefi+EFIPartitionSize+GiB), false, PartData)}},
				{Disk: "sdb", Type: GPT, Partitions: []Partition{part(1, 4*MiB, rest(ssd, uefi), false, PartData)}}},
			bc: []Bcache{{Name: "bcache0", Backing: "sda-part3", CacheSet: "cache0", Mode: WriteThrough}},
			fs: []Filesystem{{Device: "sda-part1", Type: FAT32, Label: "efi", MountPoint: "/boot/efi"},
				{Device: "sda-part2", Type: Ext4, Label: "boot", MountPoint: "/boot"},
				{Device: "bcache0", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "bcache whole cache disk writeback", layout: LayoutBcache, m: Machine{Disks: []Disk{hdd, ssd}, Firmware: BIOS},
			p: LayoutParams{CacheNoPart: true, CacheMode: "writeback", CacheDevice: "2"},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{
				part(1, MiB, BIOSGrubSize, false, PartBIOSGrub),
				part(2, 4*MiB, GiB, true, PartData),
				part(3, 4*MiB+GiB, rest(hdd, bios+GiB), false, PartData)}}},
			bc: []Bcache{{Name: "bcache0", Backing: "sda-part3", CacheSet: "cache0", Mode: WriteBack}},
			fs: []Filesystem{{Device: "sda-part2", Type: Ext4, Label: "boot", MountPoint: "/boot"}, {Device: "bcache0", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "bcache without ssd falls back to flat", layout: LayoutBcache, m: Machine{Disks: []Disk{hdd}, Firmware: BIOS}, p: LayoutParams{AllowFallback: true},
			tables: []PartitionTable{{Disk: "sda", Type: GPT, Partitions: []Partition{part(1, MiB, BIOSGrubSize, false, PartBIOSGrub), part(2, 4*MiB, rest(hdd, bios), false, PartData)}}},
			fs:     []Filesystem{{Device: "sda-part2", Type: Ext4, Label: "root", MountPoint: "/"}}},
		{name: "blank", layout: LayoutBlank, m: Machine{Disks: []Disk{hdd, ssd}, Firmware: UEFI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ApplyLayout(tt.layout, tt.m, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			same(t, "tables", c.Tables, tt.tables)
			same(t, "filesystems", c.Filesystems, tt.fs)
			same(t, "volume groups", c.VolumeGroups, tt.vgs)
			same(t, "bcaches", c.Bcaches, tt.bc)
			if _, err := c.Devices(); err != nil {
				t.Fatal(err)
			}
			for _, tb := range c.Tables {
				for _, p := range tb.Partitions {
					if p.Type != PartBIOSGrub && (p.Offset%PartitionAlignment != 0 || p.Size%PartitionAlignment != 0) {
						t.Errorf("%s partition %d not 4 MiB aligned: %+v", tb.Disk, p.Number, p)
					}
				}
			}
			if errs := Validate(c, tt.m.Firmware); errs != nil && tt.layout != LayoutBlank {
				t.Errorf("layout does not validate: %v", errs)
			}
		})
	}
}

func TestApplyLayoutRefuses(t *testing.T) {
	tests := []struct {
		name, layout string
		m            Machine
		p            LayoutParams
		field, want  string
	}{
		{"unknown layout", "zfs", Machine{Disks: []Disk{small}}, LayoutParams{}, "storage_layout", "not one of the available choices"},
		{"no disks", LayoutFlat, Machine{}, LayoutParams{}, "__all__", "doesn't have any storage devices"},
		{"too small to hold root", LayoutFlat, Machine{Disks: []Disk{tiny}, Firmware: UEFI}, LayoutParams{}, "__all__", "too small for this layout"},
		{"lvm too small to hold root", LayoutLVM, Machine{Disks: []Disk{tiny}, Firmware: BIOS}, LayoutParams{}, "__all__", "too small for this layout"},
		{"boot_size too small", LayoutFlat, Machine{Disks: []Disk{small}}, LayoutParams{BootSize: "100M"}, "boot_size", "Minimum size is 536870912"},
		{"boot_size not a size", LayoutFlat, Machine{Disks: []Disk{small}}, LayoutParams{BootSize: "big"}, "boot_size", "not a size"},
		{"root_size too large", LayoutFlat, Machine{Disks: []Disk{small}}, LayoutParams{RootSize: "100G"}, "root_size", "Size is too large"},
		{"boot and root past the disk", LayoutFlat, Machine{Disks: []Disk{small}}, LayoutParams{BootSize: "4G", RootSize: "5G"}, "__all__", "larger than the available space"},
		{"root_device unknown", LayoutFlat, Machine{Disks: []Disk{small}}, LayoutParams{RootDevice: "9"}, "root_device", "'9' is not a valid root_device"},
		{"lv_size too small", LayoutLVM, Machine{Disks: []Disk{small}}, LayoutParams{LVSize: "1G"}, "lv_size", "Size is too small"},
		{"lv_size too large", LayoutLVM, Machine{Disks: []Disk{small}, Firmware: UEFI}, LayoutParams{LVSize: "100%"}, "lv_size", "Size is too large"},
		{"vg_name bad", LayoutLVM, Machine{Disks: []Disk{small}}, LayoutParams{VGName: "-x; rm"}, "vg_name", "not a valid name"},
		{"bcache no cache device", LayoutBcache, Machine{Disks: []Disk{hdd}}, LayoutParams{}, "__all__", "available cache device"},
		{"bcache cache is boot disk", LayoutBcache, Machine{Disks: []Disk{hdd, ssd}}, LayoutParams{CacheDevice: "1"}, "cache_device", "not a valid cache_device"},
		{"bcache bad mode", LayoutBcache, Machine{Disks: []Disk{hdd, ssd}}, LayoutParams{CacheMode: "fast"}, "cache_mode", "not one of the available choices"},
		{"bcache size and no_part", LayoutBcache, Machine{Disks: []Disk{hdd, ssd}}, LayoutParams{CacheSize: "10G", CacheNoPart: true}, "cache_no_part", "at the same time"},
		{"bcache cache_size too large", LayoutBcache, Machine{Disks: []Disk{hdd, ssd}}, LayoutParams{CacheSize: "200G"}, "cache_size", "Size is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ApplyLayout(tt.layout, tt.m, tt.p)
			var fe FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want field errors", err)
			}
			if !strings.Contains(strings.Join(fe[tt.field], " "), tt.want) {
				t.Errorf("%s: got %v, want %q", tt.field, fe, tt.want)
			}
		})
	}
}

// FuzzApplyLayout: whatever the parameters, a layout is refused in words
// or comes out bootable (it passes Validate).
func FuzzApplyLayout(f *testing.F) {
	f.Add("lvm", "1G", "", "", "vg", "lv", "50%", "", "", "", false, true)
	f.Add("bcache", "", "20G", "2", "", "", "", "2", "writeback", "10%", false, false)
	f.Add("flat", "100%", "3G", "1", "", "", "", "", "", "", true, true)
	f.Fuzz(func(t *testing.T, name, boot, root, rootDev, vg, lv, lvSize, cacheDev, mode, cacheSize string, noPart, uefi bool) {
		fw := BIOS
		if uefi {
			fw = UEFI
		}
		m := Machine{Disks: []Disk{hdd, ssd}, Firmware: fw}
		p := LayoutParams{BootSize: boot, RootSize: root, RootDevice: rootDev, VGName: vg, LVName: lv, LVSize: lvSize,
			CacheDevice: cacheDev, CacheMode: mode, CacheSize: cacheSize, CacheNoPart: noPart}
		c, err := ApplyLayout(name, m, p)
		if err != nil {
			var fe FieldErrors
			if !errors.As(err, &fe) || len(fe) == 0 {
				t.Fatalf("error %v is not field errors", err)
			}
			return
		}
		if name != LayoutBlank {
			if err := Validate(c, fw); err != nil {
				t.Fatalf("%+v gave a layout that does not validate: %v", p, err)
			}
		}
	})
}
