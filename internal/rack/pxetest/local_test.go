package pxetest

import (
	"context"
	"encoding/binary"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
)

// uefiMarker is what the UEFI test disk's loader prints.
const uefiMarker = "ANVIL-UEFI-DISK-OK"

// TestLocalBootNeverFallsThrough: a Deployed machine whose firmware boots
// the network first (as MAAS sites set their servers) is answered with a
// local boot by the rack, and reaches its own disk, under SeaBIOS and
// under OVMF, both through the iPXE ROM. The enlistment environment (the
// default config, whose /init prints ANVIL-BOOT-OK) must never start: a
// chained local config that ends used to fall through ipxe.cfg to it.
func TestLocalBootNeverFallsThrough(t *testing.T) {
	s := newSite(t, "tap0", "tap1")
	biosDisk := copyDisk(t, firstOf(diskimage.Build(t)))
	efiDisk := espDisk(t)
	ctx := context.Background()
	macs := map[string]string{"bios": "52:54:00:12:34:61", "efi": "52:54:00:12:34:62"}
	s.deployed(t, macs)
	for _, c := range []struct{ name, fw, tap, disk, want string }{
		{"vm4", "bios", "tap0", biosDisk, diskimage.Marker},
		{"vm5", "efi", "tap1", efiDisk, uefiMarker},
	} {
		m := s.machine(t, c.name, macs[c.fw], c.tap, c.fw, c.disk)
		if err := m.PowerOn(); err != nil {
			t.Fatal(err)
		}
		out := waitSerial(t, m, c.want, 4*time.Minute)
		if strings.Contains(out, "ANVIL-BOOT-OK") {
			t.Fatalf("%s: the enlistment environment booted before the disk:\n%s", c.fw, tail([]byte(out), 3000))
		}
		m.Close()
		waitFor(t, c.fw+": the rack's local answer on the timeline", 30*time.Second, func() bool {
			page, err := s.cl.QueryEvents(ctx, url.Values{"hostname": {"deployed-" + c.fw}, "limit": {"100"}})
			if err != nil {
				return false
			}
			for _, e := range page.Events {
				if strings.Contains(e.Description, "purpose local") {
					return true
				}
			}
			return false
		})
	}
}

func firstOf(path string, _ int64) string { return path }

// deployed adds a machine deployed-KEY for each MAC in macs, puts it in
// Deployed and waits until the rack would answer it with a local boot.
func (s *site) deployed(t *testing.T, macs map[string]string) {
	t.Helper()
	ctx := context.Background()
	for key, mac := range macs {
		m, err := s.cl.CreateMachine(ctx, url.Values{"hostname": {"deployed-" + key}, "mac_addresses": {mac}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.srv.Store.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
			m.Status, m.Owner = machine.Deployed, "rack"
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the rack to see the machines deployed", 10*time.Second, func() bool {
		for _, mac := range macs {
			if e, ok := s.rk.Cache.ByMAC(mac); !ok || e.Purpose != machine.BootLocal {
				return false
			}
		}
		return len(s.rk.Cache.Subnets()) == 1
	})
}

func copyDisk(t *testing.T, from string) string {
	to := filepath.Join(t.TempDir(), "disk.img")
	copyTo(t, from, to)
	return to
}

// espDisk builds a 32 MiB disk with one EFI system partition (MBR type
// 0xEF) holding a standalone GRUB at the removable-media path
// EFI/BOOT/BOOTX64.EFI, which prints uefiMarker on the console and waits.
func espDisk(t *testing.T) string {
	for _, tool := range []string{"grub-mkstandalone", "mkfs.vfat", "mcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (grub-efi-amd64-bin, dosfstools, mtools)", tool)
		}
	}
	if _, err := os.Stat("/usr/lib/grub/x86_64-efi"); err != nil {
		t.Skip("GRUB's x86_64-efi modules are not installed (grub-efi-amd64-bin)")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "grub.cfg")
	if err := os.WriteFile(cfg, []byte("echo "+uefiMarker+"\nsleep 3600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	efi := filepath.Join(dir, "BOOTX64.EFI")
	run(t, "grub-mkstandalone", "-O", "x86_64-efi", "-o", efi, "--install-modules=normal echo sleep configfile",
		"--modules=normal echo sleep", "boot/grub/grub.cfg="+cfg)
	const start, size = 2048, 32 << 20
	img := filepath.Join(dir, "esp.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	mbr := make([]byte, 512)
	p := mbr[446:]
	p[4] = 0xEF
	binary.LittleEndian.PutUint32(p[8:], start)
	binary.LittleEndian.PutUint32(p[12:], size/512-start)
	mbr[510], mbr[511] = 0x55, 0xAA
	if _, err := f.Write(mbr); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run(t, "mkfs.vfat", "--offset", "2048", "-n", "ESP", img, "31744")
	at := img + "@@1M"
	run(t, "mmd", "-i", at, "::/EFI", "::/EFI/BOOT")
	run(t, "mcopy", "-i", at, efi, "::/EFI/BOOT/BOOTX64.EFI")
	return img
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
