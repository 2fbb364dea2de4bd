package storage

import (
	"errors"
	"strings"
	"testing"
)

// TestEditsCustomRAIDLVM builds the custom layout servers run (ESP on the
// first disk, RAID 1 for /boot, LVM on RAID 1 for / and swap) with the
// API's edits, and checks it validates and ids stay put across edits.
func TestEditsCustomRAIDLVM(t *testing.T) {
	c := Config{BootDisk: "sda", Disks: []Disk{{Name: "sda", Size: 20 * GiB}, {Name: "sdb", Size: 20 * GiB}}}.WithIDs()
	must := func(next Config, err error) Config {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	part := func(disk, size string) string {
		t.Helper()
		next, name, err := AddPartition(c, UEFI, disk, size, false)
		if err != nil {
			t.Fatal(err)
		}
		c = next
		return name
	}
	esp := part("sda", "536870912")
	c = must(Format(c, esp, FAT32, "efi", ""))
	c = must(Mount(c, esp, "/boot/efi", ""))
	_ = part("sdb", "536870912") // keeps the two disks' partitions aligned
	b1, b2 := part("sda", "1G"), part("sdb", "1G")
	r1, r2 := part("sda", ""), part("sdb", "")
	c = must(CreateRAID(c, "", RAID1, []string{b1, b2}, nil))
	c = must(CreateRAID(c, "", RAID1, []string{r1, r2}, nil))
	c = must(Format(c, "md0", Ext4, "boot", ""))
	c = must(Mount(c, "md0", "/boot", ""))
	c = must(CreateVG(c, "vg0", []string{"md1"}))
	next, swap, err := CreateLV(c, "vg0", "swap", "1G")
	c = must(next, err)
	next, root, err := CreateLV(c, "vg0", "root", "")
	c = must(next, err)
	c = must(Format(c, swap, Swap, "", ""))
	c = must(Mount(c, swap, "", ""))
	c = must(Format(c, root, Ext4, "root", ""))
	c = must(Mount(c, root, "/", ""))
	if err := Validate(c, UEFI); err != nil {
		t.Fatal(err)
	}
	before := c.ids()
	c = must(Unmount(c, swap, "block device"))
	for i, id := range c.ids() {
		if id != before[i] || id == 0 {
			t.Fatalf("ids changed by an edit: %v then %v", before, c.ids())
		}
	}
	// Refusals, each leaving the configuration as it was.
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"raid of one", second(CreateRAID(c, "", RAID1, []string{"sdb"}, nil)), "RAID level 1 must have at least 2 raid devices"},
		{"format a member", second(Format(c, r1, Ext4, "", "")), "Cannot format a block device that has a filesystem type of raid."},
		{"format a partitioned disk", second(Format(c, "sda", Ext4, "", "")), "Cannot format block device with a partition table."},
		{"partition on a full disk", third(AddPartition(c, UEFI, "sda", "100G", false)), "There is no space left on sda"},
		{"partition past the disk", third(AddPartition(Config{Disks: []Disk{{Name: "sdc", Size: 20 * GiB}}}, UEFI, "sdc", "100G", false)), "Partition size is too large. Maximum size is"},
		{"unformat a PV", second(Unformat(c, "md1", "block device")), "Filesystem is part of a volume group"},
		{"delete a RAID under LVM", second(DeleteRAID(c, "md1")), "md1 is in use (lvm-pv)"},
		{"lv past the vg", third(CreateLV(c, "vg0", "more", "1G")), "has no space left"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	var br *BadRequest
	if !errors.As(second(Unmount(c, swap, "block device")), &br) {
		t.Error("unmounting an unmounted filesystem is not a bad request")
	}
}

func second(_ Config, err error) error          { return err }
func third(_ Config, _ string, err error) error { return err }

func TestSameDisks(t *testing.T) {
	a := []Disk{{Name: "sda", Serial: "1", Size: 10}, {Name: "sdb", Serial: "2", Size: 10}}
	for _, tc := range []struct {
		b    []Disk
		same bool
	}{
		{[]Disk{a[1], a[0]}, true},
		{[]Disk{a[0]}, false},
		{[]Disk{a[0], {Name: "sdb", Serial: "3", Size: 10}}, false},
		{[]Disk{a[0], {Name: "sdb", Serial: "2", Size: 11}}, false},
	} {
		if got := SameDisks(a, tc.b); got != tc.same {
			t.Errorf("SameDisks(%v, %v) = %v", a, tc.b, got)
		}
	}
}

func TestRelayoutKeepsDiskIDs(t *testing.T) {
	m := Machine{Disks: []Disk{{Name: "sda", Size: 20 * GiB}}, Firmware: UEFI}
	old, _ := ApplyLayout(LayoutFlat, m, LayoutParams{})
	old = Config{}.Relayout(old)
	next, _ := ApplyLayout(LayoutLVM, Machine{Disks: old.Disks, Firmware: UEFI}, LayoutParams{})
	next = old.Relayout(next)
	if next.Disks[0].ID != old.Disks[0].ID {
		t.Fatalf("disk id %d became %d", old.Disks[0].ID, next.Disks[0].ID)
	}
	for _, id := range next.ids()[1:] {
		if id < old.NextID {
			t.Fatalf("id %d given again (old next id %d): %v", id, old.NextID, next.ids())
		}
	}
}

func TestUpdateGroups(t *testing.T) {
	c := Config{Disks: []Disk{{Name: "sda", Size: 10 * GiB}, {Name: "sdb", Size: 10 * GiB}, {Name: "sdc", Size: 10 * GiB}, {Name: "sdd", Size: 1 * GiB}}}.WithIDs()
	c, _ = CreateRAID(c, "md0", RAID1, []string{"sda", "sdb"}, nil)
	c, _ = CreateVG(c, "vg0", []string{"md0"})
	c, _, _ = CreateLV(c, "vg0", "root", "")
	c, _ = Format(c, "vg0-root", Ext4, "", "")
	next, err := UpdateRAID(c, "md0", GroupChange{Name: "mdroot", AddSpares: []string{"sdc"}})
	if err != nil || next.RAIDs[0].Name != "mdroot" || next.VolumeGroups[0].Devices[0] != "mdroot" || len(next.RAIDs[0].Spares) != 1 {
		t.Fatalf("rename RAID: %+v %v", next.RAIDs, err)
	}
	next, err = UpdateVG(c, "vg0", GroupChange{Name: "vg1"})
	if err != nil || next.Filesystems[0].Device != "vg1-root" {
		t.Fatalf("rename VG: %+v %v", next.Filesystems, err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a RAID 1 of one", second(UpdateRAID(c, "md0", GroupChange{Remove: []string{"sdb"}})), "RAID level 1 must have at least 2"},
		{"a member in use", second(UpdateRAID(c, "md0", GroupChange{Add: []string{"md0"}})), "already in use"},
		{"a VG too small", second(UpdateVG(c, "vg0", GroupChange{Add: []string{"sdd"}, Remove: []string{"md0"}})), "would be smaller than its logical volumes"},
		{"not a member", second(UpdateVG(c, "vg0", GroupChange{Remove: []string{"sdd"}})), "sdd is not one of the devices."},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}
