package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/storage"
)

func TestMatchDisks(t *testing.T) {
	local := []localDisk{
		{Name: "vda", Serial: "S1", IDs: []string{"virtio-S1"}, Size: 10 * MiB},
		{Name: "vdb", Serial: "S2", IDs: []string{"virtio-S2"}, Size: 10 * MiB},
		{Name: "sdc", Size: 4 * MiB},
	}
	for _, tc := range []struct {
		name  string
		disks []storage.Disk
		want  map[string]string
		err   string
	}{
		{"by serial, whatever the name", []storage.Disk{{Name: "sda", Serial: "S2", Size: 10 * MiB}, {Name: "sdb", Serial: "S1"}},
			map[string]string{"sda": "/dev/vdb", "sdb": "/dev/vda"}, ""},
		{"by id path", []storage.Disk{{Name: "x", IDPath: "/dev/disk/by-id/virtio-S2"}}, map[string]string{"x": "/dev/vdb"}, ""},
		{"by name when nothing else", []storage.Disk{{Name: "sdc", Size: 4 * MiB}}, map[string]string{"sdc": "/dev/sdc"}, ""},
		{"a serial that is not here", []storage.Disk{{Name: "sda", Serial: "GONE"}}, nil, "disk sda (serial GONE) is not on this machine; it has vda"},
		{"a serial is not a name", []storage.Disk{{Name: "vda", Serial: "OTHER"}}, nil, "disk vda (serial OTHER) is not on this machine"},
		{"smaller than the layout", []storage.Disk{{Name: "sdc", Size: 5 * MiB}}, nil, "is sdc here, 4 MiB, smaller than the layout's 5 MiB"},
		{"one disk twice", []storage.Disk{{Name: "a", Serial: "S1"}, {Name: "b", IDPath: "/dev/disk/by-id/virtio-S1"}}, nil, "disks a and b of the layout are both vda here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := matchDisks(storage.Config{Disks: tc.disks}, local, "/dev")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s → %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

func TestLocalDisksByID(t *testing.T) {
	root := t.TempDir()
	for _, d := range []struct{ name, serial, model string }{{"vda", "S1", ""}, {"nvme0n1", "N1", "QEMU NVMe Ctrl"}, {"sdb", "", ""}} {
		dir := filepath.Join(root, "sys/block", d.name)
		os.MkdirAll(filepath.Join(dir, "device"), 0o755)
		os.WriteFile(filepath.Join(dir, "size"), []byte("2048\n"), 0o644)
		if d.serial != "" {
			os.WriteFile(filepath.Join(dir, "serial"), []byte(d.serial+"\n"), 0o644)
		}
		if d.model != "" {
			os.WriteFile(filepath.Join(dir, "device/model"), []byte(d.model+"\n"), 0o644)
		}
	}
	os.MkdirAll(filepath.Join(root, "dev/disk/by-id"), 0o755)
	os.Symlink("../../sdb", filepath.Join(root, "dev/disk/by-id/wwn-0x5000"))
	got := map[string][]string{}
	for _, l := range localDisks(root) {
		got[l.Name] = l.IDs
	}
	for name, id := range map[string]string{"vda": "virtio-S1", "nvme0n1": "nvme-QEMU_NVMe_Ctrl_N1", "sdb": "wwn-0x5000"} {
		if !slices.Contains(got[name], id) {
			t.Errorf("%s has ids %v, want %s among them", name, got[name], id)
		}
	}
}

func TestBootDisks(t *testing.T) {
	const M = storage.MiB
	two := storage.Config{BootDisk: "a",
		Disks: []storage.Disk{{Name: "a", Size: 100 * M}, {Name: "b", Size: 100 * M}, {Name: "c", Size: 100 * M}},
		Tables: []storage.PartitionTable{
			{Disk: "a", Type: storage.GPT, Partitions: []storage.Partition{{Number: 1, Offset: M, Size: M, Type: storage.PartBIOSGrub}, {Number: 2, Offset: 2 * M, Size: 50 * M}}},
			{Disk: "b", Type: storage.GPT, Partitions: []storage.Partition{{Number: 1, Offset: M, Size: M, Type: storage.PartBIOSGrub}, {Number: 2, Offset: 2 * M, Size: 50 * M}}},
		},
		RAIDs:       []storage.RAID{{Name: "md0", Level: storage.RAID1, Devices: []string{"a-part2", "b-part2"}}},
		Filesystems: []storage.Filesystem{{Device: "md0", Type: storage.Ext4, MountPoint: "/"}, {Device: "c", Type: storage.Ext4, MountPoint: "/srv"}},
	}
	got, err := bootDisks(two)
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("RAID 1 root: %v %v, want [a b]", got, err)
	}
	two.Filesystems = append(two.Filesystems, storage.Filesystem{Device: "a-part1", Type: storage.Ext4, MountPoint: "/boot"})
	if got, _ := bootDisks(two); !slices.Equal(got, []string{"a"}) {
		t.Errorf("separate /boot: %v, want [a]", got)
	}
}

func TestBootOrder(t *testing.T) {
	for _, tc := range []struct {
		current, added string
		order, want    []string
	}{
		{"0001", "0004", []string{"0004", "0001", "0002"}, []string{"0001", "0004", "0002"}},
		{"", "0004", []string{"0004", "0000"}, []string{"0004", "0000"}},
		{"0004", "0004", []string{"0004"}, []string{"0004"}},
	} {
		if got := bootOrder(tc.current, tc.added, tc.order); !slices.Equal(got, tc.want) {
			t.Errorf("bootOrder(%s, %s, %v) = %v, want %v", tc.current, tc.added, tc.order, got, tc.want)
		}
	}
}

func TestMdadmConf(t *testing.T) {
	old := "HOMEHOST <system>\nMAILADDR root\nARRAY /dev/md/old metadata=1.2 UUID=x\n"
	got := mdadmConf(old, "ARRAY /dev/md/md0 metadata=1.2 name=any:md0 UUID=a:b:c:d\n")
	if strings.Contains(got, "md/old") || !strings.Contains(got, "MAILADDR root\n") || !strings.Contains(got, "UUID=a:b:c:d\n") {
		t.Errorf("mdadm.conf:\n%s", got)
	}
}

func TestBootEntryParse(t *testing.T) {
	out := "BootCurrent: 0001\nTimeout: 0 seconds\nBootOrder: 0004,0001,0000\nBoot0000* UiApp\tFvVol(...)\nBoot0001* UEFI PXEv4 (MAC:525400516410)\tPciRoot(0x0)\nBoot0004* debian\tHD(1,GPT,...)/File(\\EFI\\debian\\grubx64.efi)\n"
	var labels []string
	for _, m := range bootEntryRE.FindAllStringSubmatch(out, -1) {
		labels = append(labels, m[1]+"="+strings.TrimSpace(m[2]))
	}
	want := []string{"0000=UiApp", "0001=UEFI PXEv4 (MAC:525400516410)", "0004=debian"}
	if !slices.Equal(labels, want) {
		t.Errorf("entries %q, want %q", labels, want)
	}
	if m := bootCurrentRE.FindStringSubmatch(out); m == nil || m[1] != "0001" {
		t.Errorf("BootCurrent: %v", m)
	}
}

// A layout naming a disk this machine does not have is refused in words
// before anything is written, and the deployment fails with them.
func TestDeployLayoutDiskNotHere(t *testing.T) {
	root := t.TempDir()
	blockDir, devDir := filepath.Join(root, "sys/block"), filepath.Join(root, "dev")
	os.MkdirAll(filepath.Join(blockDir, "vda"), 0o755)
	os.WriteFile(filepath.Join(blockDir, "vda/size"), []byte("32768\n"), 0o644)
	os.WriteFile(filepath.Join(blockDir, "vda/serial"), []byte("S1\n"), 0o644)
	os.MkdirAll(devDir, 0o755)
	disk := filepath.Join(devDir, "vda")
	os.WriteFile(disk, []byte("untouched"), 0o644)
	cfg := storage.Config{BootDisk: "sda", Disks: []storage.Disk{{Name: "sda", Serial: "S9", Size: 8 * MiB}}}
	task := agentapi.Task{Storage: &cfg, Image: &agentapi.Image{URL: "http://127.0.0.1:1/x", SHA256: "x", Size: 1, FileType: FileTypeTgz}}
	reg, _, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	want := `storage: disk sda (serial S9) is not on this machine; it has vda (serial "S1", 16 MiB)`
	if s := lastSignal(reg); s.Status != agentapi.StatusFailed || s.Error != want {
		t.Fatalf("last signal %+v, want FAILED %q", s, want)
	}
	if b, _ := os.ReadFile(disk); string(b) != "untouched" {
		t.Errorf("the disk was written: %q", b)
	}
}
