package storage

import "testing"

func TestNeedsInitramfs(t *testing.T) {
	for _, c := range []struct {
		name string
		c    Config
		want bool
	}{
		{"flat", Config{Filesystems: []Filesystem{{Device: "sda-part2", Type: Ext4, MountPoint: "/"}}}, false},
		{"raid", Config{RAIDs: []RAID{{Name: "md0"}}}, true},
		{"lvm", Config{VolumeGroups: []VolumeGroup{{Name: "vg0"}}}, true},
		{"bcache", Config{Bcaches: []Bcache{{Name: "bcache0"}}}, true},
	} {
		if got := NeedsInitramfs(c.c); got != c.want {
			t.Errorf("%s: NeedsInitramfs = %v, want %v", c.name, got, c.want)
		}
	}
}
