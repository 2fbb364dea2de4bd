package e2e

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
)

// TestReleaseSecureErase: a machine with a virtio disk, an NVMe disk and
// a SATA disk (AHCI) is commissioned and allocated; each disk is filled
// with a pattern from the host, and a release with secure erase sends
// NVMe Format to the NVMe disk (QEMU's controller zeroes the namespace),
// asks the SATA disk over ATA pass-through for its security feature set
// (QEMU's has none, so every block is zeroed), and zeroes the virtio
// disk, which has no secure erase. The release event names each disk's
// method, and the disk files read all zeros from the host.
func TestReleaseSecureErase(t *testing.T) {
	t.Parallel() // its machine boots in a namespace of its own
	s := newSite(t, []string{"tapS0"}, nil)
	long := 6 * time.Minute
	dir := t.TempDir()
	nvme, sata := filepath.Join(dir, "nvme.img"), filepath.Join(dir, "sata.img")
	for _, p := range []string{nvme, sata} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 24<<20); err != nil {
			t.Fatal(err)
		}
	}
	qc := lab.QEMUConfig{MACs: []string{"52:54:00:0e:00:51"}, NetDevs: []string{"tapS0"}, Memory: 512,
		NVMeDisks: []string{nvme}, SATADisks: []string{sata}}
	b := s.machineWith("vmS", "192.0.2.32", "02:00:00:00:00:32", "6f2c1f1e-0000-4000-8000-000000000051", qc, 48)
	virtio := s.disks["vmS"]

	var m apiMachine
	s.api("POST", "machines/", s.ipmiParams(b), &m)
	s.waitStatus(m.SystemID, "Ready", long, b)
	s.waitFor("machine S to be off", 2*time.Minute, func() bool { return !b.Running() })
	s.api("POST", "machines/", url.Values{"op": {"allocate"}, "system_id": {m.SystemID}}, nil)

	// The machine is off: its disks are written from the host.
	pattern := bytes.Repeat([]byte{0xA5, 0x5A, 0x3C, 0xC3}, 1<<18) // 1 MiB
	for _, p := range []string{virtio, nvme, sata} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < fi.Size(); off += int64(len(pattern)) {
			if _, err := f.WriteAt(pattern, off); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}

	t0 := time.Now()
	s.api("POST", "machines/"+m.SystemID+"/", url.Values{"op": {"release"}, "erase": {"true"}, "secure_erase": {"true"}}, nil)
	s.waitStatus(m.SystemID, "Ready", long, b)
	s.waitFor("machine S to be off after the release", 2*time.Minute, func() bool { return !b.Running() })
	t.Logf("op=release with secure erase to READY and off: %.1f s", time.Since(t0).Seconds())

	for _, p := range []string{virtio, nvme, sata} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(data) - bytes.Count(data, []byte{0}); n != 0 {
			t.Errorf("%s: %d non-zero bytes of %d after the erase", filepath.Base(p), n, len(data))
		}
	}
	evs := s.events(m.SystemID)
	for _, line := range strings.Split(evs, "\n") {
		if strings.Contains(line, "nvme0n1:") {
			t.Log(line)
		}
	}
	for _, want := range []string{
		"Releasing with secure erase",
		"nvme0n1: secure erase (NVMe Format, ",
		"sda: zeroed every block (no secure erase: the drive does not support ATA security erase)",
		"vda: zeroed every block (no secure erase: virtio disks have no secure erase)",
	} {
		if !strings.Contains(evs, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, evs)
		}
	}
	// What the drives said of themselves, read from their real Identify
	// data: the serials QEMU was given.
	serial, _ := os.ReadFile(b.Serial())
	for _, want := range []string{`serial "anvil-nvme-0" format=true`, `serial "anvil-sata-0" security supported=false`} {
		if !bytes.Contains(serial, []byte(want)) {
			t.Errorf("the console lacks %q", want)
		}
	}
	for _, line := range strings.Split(string(serial), "\n") {
		if strings.Contains(line, "erase ") && (strings.Contains(line, " in ") || strings.Contains(line, "Format")) {
			t.Log(strings.TrimSpace(line))
		}
	}
}
