package diskerase

import (
	"os"
	"testing"
)

// The testdata files are what QEMU 7.2's devices answered inside the
// erasing environment (-device nvme,serial=anvil-nvme-0 over a 24 MiB
// image; -device ide-hd,serial=anvil-sata-0 on an AHCI controller),
// recorded from the agent's Identify and IDENTIFY DEVICE commands.
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordedQEMUNVMe(t *testing.T) {
	c, err := ParseNVMeController(recorded(t, "qemu-nvme-identify-controller.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "QEMU NVMe Ctrl" || c.Serial != "anvil-nvme-0" || !c.Format || c.CryptoErase || c.FormatAllNamespaces ||
		c.SanitizeCrypto || c.SanitizeBlock || c.SanitizeOverwrite || !c.WriteZeroes {
		t.Errorf("controller %+v", c)
	}
	ns, err := ParseNVMeNamespace(recorded(t, "qemu-nvme-identify-namespace.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if ns.Blocks != 24<<20/512 || ns.BlockSize != 512 || ns.LBAFormat != 0 || ns.MetadataAtEnd {
		t.Errorf("namespace %+v", ns)
	}
	if ses := NVMeSES(c); ses != SESUserData || FormatCDW10(ns, ses) != 0x200 {
		t.Errorf("SES %d CDW10 %#x, want a user data erase keeping format 0", ses, FormatCDW10(ns, ses))
	}
}

func TestRecordedQEMUATA(t *testing.T) {
	s, err := ParseATAIdentify(recorded(t, "qemu-ahci-identify-device.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "QEMU HARDDISK" || s.Serial != "anvil-sata-0" || s.Supported || s.Frozen || s.EraseTime != 0 {
		t.Errorf("%+v", s)
	}
	if ok, why := s.Usable(); ok || why != "the drive does not support ATA security erase" {
		t.Errorf("usable %v %q", ok, why)
	}
}
