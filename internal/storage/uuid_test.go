package storage

import "testing"

// TestWithAllUUIDs: every object MAAS gives a UUID gets one, each its
// own; the filesystems' are WithUUIDs' for the same draws (so plans stay
// as they were), and UUIDs already set are kept.
func TestWithAllUUIDs(t *testing.T) {
	c := mustLayout(t, LayoutBcache, Machine{Disks: []Disk{hdd, ssd}, Firmware: UEFI}, LayoutParams{})
	c.Disks = append(c.Disks, Disk{ID: 3, Name: "sdc", Size: 20 * GiB, BlockSize: 512}, Disk{ID: 4, Name: "sdd", Size: 20 * GiB, BlockSize: 512})
	c, err := CreateRAID(c, "md0", RAID1, []string{"sdc", "sdd"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err = CreateVG(c, "vg0", []string{"md0"})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, err = CreateLV(c, "vg0", "lv0", "5G"); err != nil {
		t.Fatal(err)
	}
	c.Filesystems = append(c.Filesystems, Filesystem{Type: Tmpfs, MountPoint: "/tmp"})
	if !c.MissingUUIDs() {
		t.Fatal("a fresh configuration has all its UUIDs")
	}

	all := c.WithAllUUIDs(counter())
	fsOnly := c.WithUUIDs(counter())
	for i, f := range fsOnly.Filesystems {
		if !f.Type.Special() && all.Filesystems[i].UUID != f.UUID {
			t.Errorf("filesystem on %s: %q, WithUUIDs gives %q", f.Device, all.Filesystems[i].UUID, f.UUID)
		}
	}
	seen := map[string]string{}
	has := func(what, u string) {
		t.Helper()
		if u == "" {
			t.Errorf("%s has no UUID", what)
		} else if other, ok := seen[u]; ok {
			t.Errorf("%s and %s share UUID %s", what, other, u)
		}
		seen[u] = what
	}
	for _, f := range all.Filesystems {
		has("filesystem "+f.Device+string(f.Type), f.UUID)
	}
	for _, tb := range all.Tables {
		for _, p := range tb.Partitions {
			has(PartitionName(tb.Disk, p.Number), p.UUID)
		}
	}
	for _, r := range all.RAIDs {
		has("raid "+r.Name, r.UUID)
		has("raid device "+r.Name, r.DeviceUUID)
	}
	for _, vg := range all.VolumeGroups {
		has("volume group "+vg.Name, vg.UUID)
		for _, lv := range vg.Volumes {
			has("logical volume "+lv.Name, lv.UUID)
		}
	}
	for _, b := range all.Bcaches {
		has("bcache "+b.Name, b.UUID)
		has("bcache device "+b.Name, b.DeviceUUID)
	}
	if len(all.Bcaches) == 0 || len(all.RAIDs) == 0 || len(all.VolumeGroups) == 0 {
		t.Fatalf("the configuration lacks a kind of object: %+v", all)
	}
	if all.MissingUUIDs() {
		t.Fatal("MissingUUIDs after WithAllUUIDs")
	}
	same(t, "a second pass", all.WithAllUUIDs(counter()), all)
	if c.Tables[0].Partitions[0].UUID != "" || c.Filesystems[0].UUID != "" {
		t.Fatal("WithAllUUIDs changed its receiver's lists")
	}
}
