package storage

import (
	"strings"
	"testing"
)

// TestUpdateDiskAndVirtual: a disk's rename reaches its partitions and
// everything built on them; a bcache and a logical volume are renamed
// with their filesystems; the refusals leave the configuration as it was.
func TestUpdateDiskAndVirtual(t *testing.T) {
	c := Config{BootDisk: "sda", Disks: []Disk{{Name: "sda", Serial: "A", Model: "M", Size: 10 * GiB}, {Name: "sdb", Serial: "B", Model: "M", Size: 10 * GiB},
		{Name: "sdc", Serial: "C", Model: "M", Size: 4 * GiB}}}.WithIDs()
	c, p1, err := AddPartition(c, UEFI, "sda", "2G", false)
	if err != nil {
		t.Fatal(err)
	}
	c, p2, _ := AddPartition(c, UEFI, "sda", "", false)
	c, _ = Format(c, p1, Ext4, "", "")
	c, _ = CreateVG(c, "vg0", []string{p2})
	c, _, _ = CreateLV(c, "vg0", "root", "")
	c, _ = Format(c, "vg0-root", Ext4, "", "")
	c, _ = CreateCacheSet(c, "sdc")
	c, _ = CreateBcache(c, "bcache0", "sdb", c.CacheSets[0].Name, WriteThrough)

	name := "system"
	next, err := UpdateDisk(c, "sda", DiskChange{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if next.BootDisk != "system" || next.Tables[0].Disk != "system" || next.Filesystems[0].Device != "system-part1" ||
		next.VolumeGroups[0].Devices[0] != "system-part2" || next.Disks[0].Name != "system" {
		t.Fatalf("after the rename: %+v", next)
	}
	if _, err := next.Devices(); err != nil {
		t.Fatalf("the renamed configuration does not resolve: %v", err)
	}
	if c.Disks[0].Name != "sda" || c.Filesystems[0].Device != p1 {
		t.Fatal("the original configuration was changed")
	}
	next, err = UpdateBcache(c, "bcache0", BcacheChange{Name: "fast", Mode: WriteBack})
	if err != nil || next.Bcaches[0].Name != "fast" || next.Bcaches[0].Mode != WriteBack {
		t.Fatalf("bcache: %+v %v", next.Bcaches, err)
	}
	next, err = RenameVirtual(c, "vg0-root", "sys")
	if err != nil || next.VolumeGroups[0].Volumes[0].Name != "sys" || next.Filesystems[len(next.Filesystems)-1].Device != "vg0-sys" {
		t.Fatalf("LV: %+v %v", next.VolumeGroups, err)
	}

	if same, err := RenameVirtual(c, "vg0-root", "root"); err != nil || same.VolumeGroups[0].Volumes[0].Name != "root" {
		t.Errorf("an LV renamed to its own name: %v", err)
	}
	small, bad, empty := int64(3*GiB), "x/y", ""
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a taken name", second(UpdateDisk(c, "sda", DiskChange{Name: &[]string{"sdb"}[0]})), "already exists"},
		{"a partition's name", second(UpdateDisk(c, "sdb", DiskChange{Name: &[]string{"sdx-part1"}[0]})), "already exists"},
		{"partitions past the size", second(UpdateDisk(c, "sda", DiskChange{Size: &small})), "past the new size"},
		{"a relative id_path", second(UpdateDisk(c, "sda", DiskChange{IDPath: &bad})), "absolute path"},
		{"no serial and no id_path", second(UpdateDisk(c, "sda", DiskChange{Serial: &empty})), "serial/model are required"},
		{"a bcache on its cache", second(UpdateBcache(c, "bcache0", BcacheChange{Backing: "sdc"})), "already in use"},
		{"a bad mode", second(UpdateBcache(c, "bcache0", BcacheChange{Mode: "often"})), "not one of the available choices"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}
