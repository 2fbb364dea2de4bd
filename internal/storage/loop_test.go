package storage

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPlanOnLoopDevices runs plans with the real tools on loop devices
// backed by sparse files and checks with lsblk that the disks hold what
// the configuration says. It needs root, the tools, and for LVM and RAID
// a kernel with device-mapper and md; it says which is missing when it
// skips. Everything it makes it removes by name, also when it fails.
func TestPlanOnLoopDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make loop devices")
	}
	needTools(t, "losetup", "blkid", "wipefs", "sgdisk", "partx", "mkfs.ext4", "mkfs.vfat", "lsblk", "mount", "umount")
	tag := fmt.Sprintf("anvil%d", os.Getpid()%100000) // names of VGs and arrays, unique to this run
	t.Run("flat-bios", func(t *testing.T) {
		c := mustLayout(t, LayoutFlat, Machine{Disks: []Disk{{ID: 1, Name: "sda", Size: 4 * GiB, BlockSize: 512}}, Firmware: BIOS}, LayoutParams{})
		runOnLoops(t, c, BIOS)
	})
	t.Run("flat-uefi-boot", func(t *testing.T) {
		c := mustLayout(t, LayoutFlat, Machine{Disks: []Disk{{ID: 1, Name: "sda", Size: 5 * GiB, BlockSize: 512}}, Firmware: UEFI}, LayoutParams{BootSize: "600M"})
		runOnLoops(t, c, UEFI)
	})
	t.Run("lvm-uefi", func(t *testing.T) {
		needDM(t)
		c := mustLayout(t, LayoutLVM, Machine{Disks: []Disk{{ID: 1, Name: "sda", Size: 5 * GiB, BlockSize: 512}}, Firmware: UEFI},
			LayoutParams{VGName: tag + "vg", BootSize: "600M"})
		runOnLoops(t, c, UEFI)
	})
	t.Run("bcache-uefi", func(t *testing.T) {
		needTools(t, "make-bcache")
		if _, err := os.Stat("/sys/fs/bcache"); err != nil {
			t.Skip("the kernel has no bcache (no /sys/fs/bcache; load bcache)")
		}
		c := mustLayout(t, LayoutBcache, Machine{Disks: []Disk{
			{ID: 1, Name: "sda", Size: 6 * GiB, BlockSize: 512, Tags: []string{"rotary"}},
			{ID: 2, Name: "sdb", Size: GiB, BlockSize: 512, Tags: []string{"ssd"}}}, Firmware: UEFI}, LayoutParams{CacheMode: "writeback"})
		runOnLoops(t, c, UEFI)
	})
	t.Run("raid1-lvm-uefi", func(t *testing.T) {
		needDM(t)
		needTools(t, "mdadm", "mkswap")
		if _, err := os.Stat("/proc/mdstat"); err != nil {
			t.Skip("the kernel has no md RAID (no /proc/mdstat; load md_mod and raid1)")
		}
		c := twoDisks()
		c.RAIDs[0].Name, c.RAIDs[1].Name = tag+"b", tag+"r"
		c.RAIDs[1].Devices = []string{"sda-part3", "sdb-part3"}
		c.VolumeGroups[0].Name, c.VolumeGroups[0].Devices = tag+"vg", []string{tag + "r"}
		c.Filesystems[1].Device = tag + "b"
		c.Filesystems[2].Device, c.Filesystems[3].Device = LVName(tag+"vg", "root"), LVName(tag+"vg", "swap")
		runOnLoops(t, c, UEFI)
	})
}

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed (Debian: gdisk, mdadm, lvm2, e2fsprogs, dosfstools, util-linux)", n)
		}
	}
}

func needDM(t *testing.T) {
	t.Helper()
	needTools(t, "lvm", "dmsetup")
	if out, err := exec.Command("dmsetup", "version").CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
		t.Skipf("the kernel has no device-mapper, so LVM cannot run here (dmsetup: %s)", first)
	}
}

// needFilesystems skips when the kernel cannot mount one of c's
// filesystems (it lists what it can in /proc/filesystems).
func needFilesystems(t *testing.T, c Config) {
	t.Helper()
	have, _ := os.ReadFile("/proc/filesystems")
	for _, f := range c.Filesystems {
		if f.Type == Swap || f.MountPoint == "" {
			continue
		}
		if !slices.Contains(strings.Fields(string(have)), fstabType(f.Type)) {
			t.Skipf("the kernel cannot mount %s (not in /proc/filesystems)", fstabType(f.Type))
		}
	}
}

func randomUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func run(t *testing.T, stdin string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// runOnLoops backs each disk of c with a sparse file on a loop device,
// runs c's plan, and compares lsblk's view with c.
func runOnLoops(t *testing.T, c Config, fw Firmware) {
	needFilesystems(t, c)
	dir := t.TempDir()
	c = c.WithUUIDs(randomUUID)
	paths := map[string]string{}
	for _, d := range c.Disks {
		f := filepath.Join(dir, d.Name+".img")
		run(t, "", "truncate", "-s", fmt.Sprint(d.Size), f)
		dev := strings.TrimSpace(run(t, "", "losetup", "--find", "--show", "--partscan", f))
		paths[d.Name] = dev
		t.Cleanup(func() { exec.Command("losetup", "--detach", dev).Run() })
	}
	target := filepath.Join(dir, "target")
	pl, err := MakePlan(c, fw, paths, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { teardown(t, c, pl, paths) })
	for _, s := range pl.Steps {
		if s.Op == "write" {
			if err := os.WriteFile(s.Path, []byte(s.Data), 0o200); err != nil {
				t.Fatalf("write %s: %v", s.Path, err)
			}
			continue
		}
		run(t, s.Stdin, s.Argv...)
	}
	checkLsblk(t, c, paths, target)
}

// teardown undoes a plan by name: mounts deepest first, volume groups,
// arrays (and their superblocks), so the loop devices can be freed.
func teardown(t *testing.T, c Config, pl Plan, paths map[string]string) {
	var mounts []string
	for _, s := range pl.Steps {
		if s.Op == "mount" {
			mounts = append(mounts, s.Argv[len(s.Argv)-1])
		}
	}
	slices.Reverse(mounts)
	for _, m := range mounts {
		exec.Command("umount", m).Run()
	}
	for i := range c.Bcaches {
		os.WriteFile(fmt.Sprintf("/sys/block/bcache%d/bcache/stop", i), []byte("1"), 0o200)
	}
	for _, cs := range c.CacheSets {
		os.WriteFile("/sys/fs/bcache/"+cs.UUID+"/unregister", []byte("1"), 0o200)
	}
	for _, vg := range c.VolumeGroups {
		exec.Command("vgremove", "--config", LVMConfig, "-ff", "-y", vg.Name).Run()
	}
	for _, r := range c.RAIDs {
		exec.Command("mdadm", "--stop", "/dev/md/"+r.Name).Run()
	}
	for _, r := range c.RAIDs {
		for _, d := range append(append([]string{}, r.Devices...), r.Spares...) {
			if p, ok := plPath(c, paths, d); ok {
				exec.Command("mdadm", "--zero-superblock", p).Run()
			}
		}
	}
}

func plPath(c Config, paths map[string]string, name string) (string, bool) {
	for _, tb := range c.Tables {
		for _, p := range tb.Partitions {
			if PartitionName(tb.Disk, p.Number) == name {
				return PartitionPath(paths[tb.Disk], p.Number), true
			}
		}
	}
	return "", false
}

type lsblkDev struct {
	Name       string     `json:"name"`
	Path       string     `json:"path"`
	Type       string     `json:"type"`
	Size       int64      `json:"size"`
	FSType     *string    `json:"fstype"`
	UUID       *string    `json:"uuid"`
	Label      *string    `json:"label"`
	Mountpoint *string    `json:"mountpoint"`
	Start      *int64     `json:"start"`
	Children   []lsblkDev `json:"children"`
}

// checkLsblk: every partition at its offset and size, every filesystem
// of its type and UUID on its device, each mounted one under the target.
func checkLsblk(t *testing.T, c Config, paths map[string]string, target string) {
	args := []string{"--json", "--bytes", "--output", "NAME,PATH,TYPE,SIZE,FSTYPE,UUID,LABEL,MOUNTPOINT,START"}
	for _, d := range c.Disks {
		args = append(args, paths[d.Name])
	}
	out := run(t, "", append([]string{"lsblk"}, args...)...)
	var doc struct {
		Devices []lsblkDev `json:"blockdevices"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("lsblk: %v\n%s", err, out)
	}
	byPath := map[string]lsblkDev{}
	var walk func([]lsblkDev)
	walk = func(ds []lsblkDev) {
		for _, d := range ds {
			if _, seen := byPath[d.Path]; !seen {
				byPath[d.Path] = d
			}
			walk(d.Children)
		}
	}
	walk(doc.Devices)
	p := &planner{c: c, disks: paths}
	if err := p.paths(); err != nil {
		t.Fatal(err)
	}
	for _, tb := range c.Tables {
		for _, pt := range tb.Partitions {
			d, ok := byPath[PartitionPath(paths[tb.Disk], pt.Number)]
			if !ok || d.Size != pt.Size || d.Start == nil || *d.Start*512 != pt.Offset {
				t.Errorf("partition %s: lsblk shows %+v, want offset %d size %d", PartitionName(tb.Disk, pt.Number), d, pt.Offset, pt.Size)
			}
		}
	}
	for _, r := range c.RAIDs {
		d, ok := findDev(byPath, p.path[r.Name])
		if want := strings.ReplaceAll(string(r.Level), "-", ""); !ok || d.Type != want {
			t.Errorf("RAID %s: lsblk shows %+v, want type %s", r.Name, d, want)
		}
	}
	for i, b := range c.Bcaches {
		sys := fmt.Sprintf("/sys/block/bcache%d/bcache/", i)
		mode, _ := os.ReadFile(sys + "cache_mode")
		state, _ := os.ReadFile(sys + "state")
		if !strings.Contains(string(mode), "["+string(b.Mode)+"]") || strings.TrimSpace(string(state)) == "no cache" {
			t.Errorf("bcache %s: cache_mode %q state %q, want %s with its cache attached", b.Name, bytes.TrimSpace(mode), bytes.TrimSpace(state), b.Mode)
		}
	}
	for _, vg := range c.VolumeGroups {
		for _, lv := range vg.Volumes {
			d, ok := findDev(byPath, p.path[LVName(vg.Name, lv.Name)])
			if !ok || d.Type != "lvm" || d.Size != lv.Size {
				t.Errorf("logical volume %s: lsblk shows %+v, want lvm of %d bytes", LVName(vg.Name, lv.Name), d, lv.Size)
			}
		}
	}
	for _, f := range c.Filesystems {
		if f.Type.Special() {
			continue
		}
		d, ok := findDev(byPath, p.path[f.Device])
		if !ok {
			t.Errorf("%s: lsblk does not show %s\n%s", f.Device, p.path[f.Device], out)
			continue
		}
		if d.FSType == nil {
			// lsblk reads signatures from udev's database; with no udev
			// (a container, the installer) ask blkid to probe the device.
			d.FSType, d.UUID = probe(t, d.Path)
		}
		if d.FSType == nil || *d.FSType != fstabType(f.Type) || d.UUID == nil || !strings.EqualFold(*d.UUID, f.UUID) {
			t.Errorf("%s: lsblk shows fstype %v uuid %v, want %s %s", f.Device, deref(d.FSType), deref(d.UUID), f.Type, f.UUID)
		}
		if want := mountDir(target, f); want != "" && (d.Mountpoint == nil || *d.Mountpoint != want) {
			t.Errorf("%s: mounted at %v, want %s", f.Device, deref(d.Mountpoint), want)
		}
	}
}

// probe reads a device's filesystem type and UUID with blkid -p.
func probe(t *testing.T, path string) (fstype, uuid *string) {
	out, _ := exec.Command("blkid", "-p", "-o", "export", path).Output()
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, "=")
		switch k {
		case "TYPE":
			fstype = &v
		case "UUID":
			uuid = &v
		}
	}
	return fstype, uuid
}

// findDev finds a device by its path, following the symlinks LVM and md
// make (/dev/vg/lv, /dev/md/name) to the node lsblk names.
func findDev(byPath map[string]lsblkDev, path string) (lsblkDev, bool) {
	if d, ok := byPath[path]; ok {
		return d, true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return lsblkDev{}, false
	}
	for _, d := range byPath {
		if r, err := filepath.EvalSymlinks(d.Path); err == nil && r == real {
			return d, true
		}
	}
	return lsblkDev{}, false
}

func mountDir(target string, f Filesystem) string {
	switch f.MountPoint {
	case "", "none":
		return ""
	case "/":
		return target
	}
	return target + f.MountPoint
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
