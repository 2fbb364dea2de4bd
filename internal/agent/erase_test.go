package agent

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func TestEraseQuick(t *testing.T) {
	blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": 8 * MiB, "vdb": 6 * MiB, "loop0": 4 * MiB})
	reg, power, out := runPhase(t, agentapi.PhaseDiskErasing, agentapi.Task{Erase: EraseQuick}, blockDir, devDir)
	if s := lastSignal(reg); s.Status != agentapi.StatusOK {
		t.Fatalf("last signal %+v", s)
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power %v", got)
	}
	for _, name := range []string{"vda", "vdb"} {
		disk, _ := os.ReadFile(filepath.Join(devDir, name))
		n := len(disk)
		if !bytes.Equal(disk[:2*MiB], make([]byte, 2*MiB)) || !bytes.Equal(disk[n-2*MiB:], make([]byte, 2*MiB)) {
			t.Errorf("%s: ends not zeroed", name)
		}
		if !bytes.Equal(disk[2*MiB:n-2*MiB], bytes.Repeat([]byte{0xAA}, n-4*MiB)) {
			t.Errorf("%s: the middle was written", name)
		}
	}
	if loop, _ := os.ReadFile(filepath.Join(devDir, "loop0")); loop[0] != 0xAA {
		t.Error("loop device erased")
	}
	if !strings.Contains(out, "erase mode=quick disks=vda,vdb") {
		t.Error("no erase line")
	}
}

// TestEraseFallbacks: full zeroes every block; secure tries each disk's
// own erase first, and disks without one (here: files, which answer
// neither the NVMe nor the ATA ioctls, and a virtio name that is not
// even tried) get every block zeroed, or only their ends when quick was
// asked too. The OK signal says, per disk, what was done and why.
func TestEraseFallbacks(t *testing.T) {
	sizes := map[string]int64{"vda": 9 * MiB, "nvme0n1": 6 * MiB, "sda": 5 * MiB}
	for _, c := range []struct {
		mode   string
		whole  bool
		report []string
	}{
		{EraseFull, true, []string{"nvme0n1: zeroed every block; sda: zeroed every block; vda: zeroed every block"}},
		{EraseSecure, true, []string{
			"nvme0n1: zeroed every block (no secure erase: not an NVMe namespace",
			"sda: zeroed every block (no secure erase: not an ATA disk (IDENTIFY DEVICE:",
			"vda: zeroed every block (no secure erase: virtio disks have no secure erase)"}},
		{EraseSecureQuick, false, []string{
			"nvme0n1: quick erase (first and last 2 MiB zeroed) (no secure erase: not an NVMe namespace",
			"vda: quick erase (first and last 2 MiB zeroed) (no secure erase: virtio disks have no secure erase)"}},
	} {
		blockDir, devDir := testDisks(t, 0xAA, sizes)
		reg, _, out := runPhase(t, agentapi.PhaseDiskErasing, agentapi.Task{Erase: c.mode}, blockDir, devDir)
		s := lastSignal(reg)
		if s.Status != agentapi.StatusOK {
			t.Fatalf("%s: last signal %+v", c.mode, s)
		}
		for _, want := range c.report {
			if !strings.Contains(s.Error, want) {
				t.Errorf("%s: the report %q lacks %q", c.mode, s.Error, want)
			}
		}
		for name := range sizes {
			disk, _ := os.ReadFile(filepath.Join(devDir, name))
			zeros := bytes.Count(disk, []byte{0})
			if c.whole && zeros != len(disk) || !c.whole && zeros != 4*MiB {
				t.Errorf("%s: %s has %d zero bytes of %d", c.mode, name, zeros, len(disk))
			}
		}
		if !strings.Contains(out, "erase mode="+c.mode) {
			t.Errorf("%s: no erase line in\n%s", c.mode, out)
		}
	}
}

func TestRelease(t *testing.T) {
	reg, power, _ := runPhase(t, agentapi.PhaseReleasing, agentapi.Task{}, t.TempDir(), t.TempDir())
	if s := lastSignal(reg); s.Status != agentapi.StatusOK {
		t.Fatalf("last signal %+v", s)
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power %v", got)
	}
}

// gptImage is a disk image with a GPT made for its own size: one Linux
// partition from 1 MiB to the last usable sector.
func gptImage(size int64) []byte {
	img := testImage(size)
	sectors := size / 512
	for i := 446; i < 510; i++ {
		img[i] = 0
	}
	pe := img[446:462]
	pe[4] = 0xEE
	binary.LittleEndian.PutUint32(pe[8:], 1)
	binary.LittleEndian.PutUint32(pe[12:], uint32(sectors-1))
	ents := make([]byte, 128*128)
	copy(ents[0:16], guidBytes("0FC63DAF-8483-4772-8E79-3D69D8477DE4"))
	copy(ents[16:32], guidBytes("11111111-2222-3333-4444-555555555555"))
	binary.LittleEndian.PutUint64(ents[32:], 2048)
	binary.LittleEndian.PutUint64(ents[40:], uint64(sectors-34))
	hdr := func(my, alt, entLBA int64) []byte {
		h := make([]byte, 512)
		copy(h, "EFI PART")
		binary.LittleEndian.PutUint32(h[8:], 0x00010000)
		binary.LittleEndian.PutUint32(h[12:], 92)
		binary.LittleEndian.PutUint64(h[24:], uint64(my))
		binary.LittleEndian.PutUint64(h[32:], uint64(alt))
		binary.LittleEndian.PutUint64(h[40:], 34)
		binary.LittleEndian.PutUint64(h[48:], uint64(sectors-34))
		copy(h[56:72], guidBytes("AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE"))
		binary.LittleEndian.PutUint64(h[72:], uint64(entLBA))
		binary.LittleEndian.PutUint32(h[80:], 128)
		binary.LittleEndian.PutUint32(h[84:], 128)
		binary.LittleEndian.PutUint32(h[88:], crc32.ChecksumIEEE(ents))
		binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h[:92]))
		return h
	}
	copy(img[512:], hdr(1, sectors-1, 2))
	copy(img[1024:], ents)
	copy(img[(sectors-33)*512:], ents)
	copy(img[(sectors-1)*512:], hdr(sectors-1, 1, sectors-33))
	return img
}

func TestDeployGPT(t *testing.T) {
	raw := gptImage(3 * MiB)
	srv := &imageServer{data: raw}
	img := newServer(t, srv)
	const diskSize = 20 * MiB
	blockDir, devDir := testDisks(t, 0xAA, map[string]int64{"vda": diskSize})
	task := agentapi.Task{InstanceID: "i-1", Hostname: "h", Image: &agentapi.Image{URL: img, SHA256: sha(raw), Size: int64(len(raw)), FileType: FileTypeRaw}}
	reg, _, _ := runPhase(t, agentapi.PhaseDeploying, task, blockDir, devDir)
	if s := lastSignal(reg); s.Status != agentapi.StatusInstalled {
		t.Fatalf("last signal %+v", s)
	}
	path := filepath.Join(devDir, "vda")
	disk, _ := os.ReadFile(path)
	sectors := int64(diskSize / 512)
	check := func(lba, alt int64) []byte {
		h := append([]byte(nil), disk[lba*512:lba*512+92]...)
		want := binary.LittleEndian.Uint32(h[16:])
		binary.LittleEndian.PutUint32(h[16:], 0)
		if string(h[:8]) != "EFI PART" || crc32.ChecksumIEEE(h) != want {
			t.Fatalf("header at %d: bad signature or CRC", lba)
		}
		if int64(binary.LittleEndian.Uint64(h[24:])) != lba || int64(binary.LittleEndian.Uint64(h[32:])) != alt {
			t.Fatalf("header at %d: my/alternate LBA wrong", lba)
		}
		if binary.LittleEndian.Uint64(h[48:]) != uint64(sectors-34) {
			t.Fatalf("header at %d: last usable %d", lba, binary.LittleEndian.Uint64(h[48:]))
		}
		el := int64(binary.LittleEndian.Uint64(h[72:]))
		ents := disk[el*512 : el*512+128*128]
		if crc32.ChecksumIEEE(ents) != binary.LittleEndian.Uint32(h[88:]) {
			t.Fatalf("header at %d: entries CRC", lba)
		}
		return ents
	}
	ents := check(1, sectors-1)
	backup := check(sectors-1, 1)
	if !bytes.Equal(ents, backup) {
		t.Fatal("backup entries differ")
	}
	e := ents[128:256]
	first, last := int64(binary.LittleEndian.Uint64(e[32:])), int64(binary.LittleEndian.Uint64(e[40:]))
	if !bytes.Equal(e[:16], gptBasicData) || first%2048 != 0 || (last+1-first)*512 != 8*MiB || last > sectors-34 {
		t.Fatalf("seed entry %d-%d", first, last)
	}
	files := checkFAT(t, disk[first*512:(last+1)*512])
	if files["meta-data"] != "instance-id: \"i-1\"\nlocal-hostname: \"h\"\n" || files["user-data"] != "#cloud-config\n{}\n" {
		t.Fatalf("seed files %q", files)
	}
	if _, err := exec.LookPath("partx"); err == nil {
		out, err := exec.Command("partx", "--show", "-o", "NR,START,END,NAME", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "CIDATA") {
			t.Errorf("partx: %v\n%s", err, out)
		}
		t.Logf("partx:\n%s", out)
	}
}
