package storage

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata/")

// counter hands out UUIDs 00000001-0000-4000-8000-000000000001, ... so
// plans are the same on every run.
func counter() func() string {
	n := 0
	return func() string {
		n++
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n)
	}
}

func mustLayout(t *testing.T, name string, m Machine, p LayoutParams) Config {
	t.Helper()
	c, err := ApplyLayout(name, m, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPlanGolden(t *testing.T) {
	paths := map[string]string{"sda": "/dev/sda", "sdb": "/dev/nvme0n1"}
	tests := []struct {
		name string
		c    Config
		fw   Firmware
	}{
		{"flat-bios", mustLayout(t, LayoutFlat, Machine{Disks: []Disk{small}, Firmware: BIOS}, LayoutParams{}), BIOS},
		{"lvm-uefi", mustLayout(t, LayoutLVM, Machine{Disks: []Disk{hdd}, Firmware: UEFI}, LayoutParams{BootSize: "1G", LVSize: "100G"}), UEFI},
		{"bcache-uefi", mustLayout(t, LayoutBcache, Machine{Disks: []Disk{hdd, ssd}, Firmware: UEFI}, LayoutParams{CacheMode: "writeback", CacheSize: "50G"}), UEFI},
		{"raid1-boot-lvm-uefi", twoDisks(), UEFI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := MakePlan(tt.c.WithUUIDs(counter()), tt.fw, paths, "/target")
			if err != nil {
				t.Fatal(err)
			}
			again, _ := MakePlan(tt.c.WithUUIDs(counter()), tt.fw, paths, "/target")
			if again.String() != pl.String() {
				t.Fatal("the same configuration gave two plans")
			}
			file := filepath.Join("testdata", "plan-"+tt.name+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(pl.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if pl.String() != string(want) {
				t.Errorf("plan differs from %s (rerun with -update if intended):\n%s", file, pl)
			}
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	c := twoDisks().WithUUIDs(counter())
	paths := map[string]string{"sda": "/dev/sda", "sdb": "/dev/sdb"}
	tests := []struct {
		name   string
		change func(c *Config, paths map[string]string)
		want   string
	}{
		{"invalid configuration", func(c *Config, _ map[string]string) { c.Filesystems[2].MountPoint = "/x" }, "no filesystem is mounted at /"},
		{"no path for a disk", func(_ *Config, p map[string]string) { delete(p, "sdb") }, "no device path given for disk sdb"},
		{"no UUID", func(c *Config, _ map[string]string) { c.Filesystems[2].UUID = "" }, "needs a UUID"},
		{"bad label", func(c *Config, _ map[string]string) { c.Filesystems[2].Label = "$(reboot)" }, `label "$(reboot)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := c
			cc.Filesystems = append([]Filesystem(nil), c.Filesystems...)
			p := map[string]string{}
			for k, v := range paths {
				p[k] = v
			}
			tt.change(&cc, p)
			_, err := MakePlan(cc, UEFI, p, "/target")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
