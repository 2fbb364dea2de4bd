package diskimage

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const diskSize = 128 << 20

// TestImageLayout checks the MBR: boot code, one active partition from
// PartStart to the end of the image, slots 2-4 free.
func TestImageLayout(t *testing.T) {
	path, size := Build(t)
	if size != ImageSize {
		t.Fatalf("size %d, want %d", size, ImageSize)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != size {
		t.Fatalf("stat %s: %v (size %v)", path, err, fi)
	}
	mbr := readSector(t, path)
	code, _ := os.ReadFile(mbrCode)
	if !bytes.Equal(mbr[:len(code)], code) {
		t.Error("MBR boot code is not syslinux's mbr.bin")
	}
	if mbr[510] != 0x55 || mbr[511] != 0xaa {
		t.Error("no boot signature")
	}
	e := mbr[446:462]
	if e[0] != 0x80 || binary.LittleEndian.Uint32(e[8:]) != PartStart ||
		int64(PartStart+binary.LittleEndian.Uint32(e[12:]))*sector != size {
		t.Errorf("partition 1 = % x", e)
	}
	for i := 1; i < 4; i++ {
		if !bytes.Equal(mbr[446+16*i:462+16*i], make([]byte, 16)) {
			t.Errorf("partition slot %d is not free", i+1)
		}
	}
}

func TestCompressed(t *testing.T) {
	raw, _ := Build(t)
	want, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	gz, gzSize := BuildGz(t)
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("image.gz does not decompress to the image (%v)", err)
	}
	xz, xzSize := BuildXz(t)
	got, err = exec.Command("xz", "-dc", xz).Output()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("image.xz does not decompress to the image (%v)", err)
	}
	t.Logf("raw %d, gz %d, xz %d bytes", len(want), gzSize, xzSize)
}

func TestBootWithSeed(t *testing.T) {
	disk := deployedDisk(t, "node-7f3a", "i-0123", "#cloud-config anvil-e2e\nhostname: ignored\n")
	boot(t, disk, Line("node-7f3a", "#cloud-config anvil-e2e"))
}

func TestBootWithoutSeed(t *testing.T) {
	disk := deployedDisk(t, "", "", "")
	boot(t, disk, NoSeed)
}

// deployedDisk copies the image to a 128 MiB disk file and, when hostname
// is set, adds a seed as the deployer does: a new primary partition after
// the image's last one, FAT labelled CIDATA with meta-data and user-data.
func deployedDisk(t *testing.T, hostname, instanceID, userData string) string {
	t.Helper()
	img, _ := Build(t)
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 (package qemu-system-x86) is not installed")
	}
	disk := filepath.Join(t.TempDir(), "disk.raw")
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(disk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, diskSize); err != nil {
		t.Fatal(err)
	}
	if hostname == "" {
		return disk
	}
	mbr := readSector(t, disk)
	var end uint32
	slot := -1
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i : 462+16*i]
		if e[4] == 0 {
			if slot < 0 {
				slot = i
			}
			continue
		}
		if last := binary.LittleEndian.Uint32(e[8:]) + binary.LittleEndian.Uint32(e[12:]); last > end {
			end = last
		}
	}
	if slot < 0 {
		t.Fatal("no free partition slot")
	}
	start := (end + 2047) / 2048 * 2048
	const seedSectors = 8 << 20 / sector
	if int64(start+seedSectors)*sector > diskSize {
		t.Fatal("seed does not fit")
	}
	PutPartition(mbr, slot, false, 0x0c, start, seedSectors)
	f, err := os.OpenFile(disk, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(mbr, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mustRun(t, "mkfs.vfat", "-n", "CIDATA", "-h", fmt.Sprint(start), "--offset", fmt.Sprint(start), disk, fmt.Sprint(seedSectors*sector/1024))
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta-data")
	user := filepath.Join(dir, "user-data")
	os.WriteFile(meta, []byte("instance-id: "+instanceID+"\nlocal-hostname: "+hostname+"\n"), 0o644)
	os.WriteFile(user, []byte(userData), 0o644)
	mustRun(t, "mcopy", "-i", fmt.Sprintf("%s@@%d", disk, int64(start)*sector), meta, user, "::")
	return disk
}

// boot boots disk in QEMU and waits for want on the serial console.
func boot(t *testing.T, disk, want string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "serial.log")
	cmd := exec.Command("qemu-system-x86_64", "-accel", "tcg", "-m", "256", "-nographic",
		"-serial", "file:"+log, "-monitor", "none", "-drive", "file="+disk+",format=raw,if=virtio",
		"-net", "none", "-no-reboot")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()
	start := time.Now()
	deadline := time.After(3 * time.Minute)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			done <- err
			b, _ := os.ReadFile(log)
			t.Fatalf("QEMU exited (%v) before %q\nqemu: %s\nserial:\n%s", err, want, out.String(), b)
		case <-deadline:
			b, _ := os.ReadFile(log)
			t.Fatalf("no %q within 3 minutes\nserial:\n%s", want, b)
		case <-tick.C:
			b, _ := os.ReadFile(log)
			for _, l := range strings.Split(string(b), "\n") {
				l = strings.TrimRight(l, "\r")
				if strings.HasPrefix(l, Marker) {
					if l != want {
						t.Fatalf("serial says %q, want %q\nserial:\n%s", l, want, b)
					}
					t.Logf("%q after %v", l, time.Since(start).Round(100*time.Millisecond))
					if testing.Verbose() {
						t.Logf("serial:\n%s", b)
					}
					return
				}
			}
		}
	}
}

func readSector(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, sector)
	if _, err := io.ReadFull(f, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
	if err := run(name, args...); err != nil {
		t.Fatal(err)
	}
}
