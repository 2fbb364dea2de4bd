package diskerase

import (
	"encoding/binary"
	"strings"
	"testing"
)

// nvmeController builds Identify Controller data with the fields erase
// reads at their offsets in the NVM Express base specification.
func nvmeController(oacs, oncs uint16, sanicap uint32, fna byte) []byte {
	b := make([]byte, NVMeIdentifyLen)
	copy(b[4:24], "anvil-nvme-0        ")
	copy(b[24:64], "QEMU NVMe Ctrl                          ")
	binary.LittleEndian.PutUint16(b[256:], oacs)
	binary.LittleEndian.PutUint32(b[328:], sanicap)
	binary.LittleEndian.PutUint16(b[520:], oncs)
	b[524] = fna
	return b
}

func TestParseNVMeController(t *testing.T) {
	// OACS of QEMU's controller: Format NVM, Namespace Management,
	// Doorbell Buffer Config; ONCS with Write Zeroes; no crypto erase.
	c, err := ParseNVMeController(nvmeController(0x010A, 0x015D, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Format || c.CryptoErase || !c.WriteZeroes || c.Serial != "anvil-nvme-0" || c.Model != "QEMU NVMe Ctrl" {
		t.Errorf("%+v", c)
	}
	if NVMeSES(c) != SESUserData {
		t.Errorf("SES %d, want user data erase", NVMeSES(c))
	}
	// A drive with crypto erase (FNA bit 2), formatting all namespaces
	// at once (bit 0), and sanitize crypto + block erase.
	c, _ = ParseNVMeController(nvmeController(0x0006, 0, 0x3, 0x5))
	if !c.Format || !c.CryptoErase || !c.FormatAllNamespaces || !c.SanitizeCrypto || !c.SanitizeBlock || c.SanitizeOverwrite {
		t.Errorf("%+v", c)
	}
	if NVMeSES(c) != SESCrypto || NVMeMethod(NVMeSES(c)) != MethodNVMeCrypto {
		t.Errorf("SES %d, want crypto erase", NVMeSES(c))
	}
	// No Format NVM (OACS bit 1 clear).
	if c, _ := ParseNVMeController(nvmeController(0x0008, 0, 0, 0x4)); c.Format {
		t.Errorf("Format without OACS bit 1: %+v", c)
	}
	if _, err := ParseNVMeController(make([]byte, 100)); err == nil {
		t.Error("short data taken")
	}
}

func nvmeNamespace(nsze uint64, nlbaf, flbas byte, formats ...uint32) []byte {
	b := make([]byte, NVMeIdentifyLen)
	binary.LittleEndian.PutUint64(b[0:], nsze)
	b[25], b[26] = nlbaf, flbas
	for i, f := range formats {
		binary.LittleEndian.PutUint32(b[128+4*i:], f)
	}
	return b
}

func TestParseNVMeNamespaceAndFormat(t *testing.T) {
	// QEMU's default: 8 formats, the first in use (512-byte blocks).
	lbafs := []uint32{9 << 16, 9<<16 | 8, 9<<16 | 16, 9<<16 | 64, 12 << 16, 12<<16 | 8, 12<<16 | 16, 12<<16 | 64}
	ns, err := ParseNVMeNamespace(nvmeNamespace(49152, 7, 0x00, lbafs...))
	if err != nil {
		t.Fatal(err)
	}
	if ns.Blocks != 49152 || ns.BlockSize != 512 || ns.LBAFormat != 0 || ns.MetadataAtEnd {
		t.Errorf("%+v", ns)
	}
	// Format keeps the format; SES in bits 11:9.
	if got := FormatCDW10(ns, SESUserData); got != 0x200 {
		t.Errorf("CDW10 %#x, want 0x200", got)
	}
	// Format 5 (4 KiB blocks, 8 bytes of metadata) with the metadata at
	// the end of each block.
	ns, err = ParseNVMeNamespace(nvmeNamespace(1000, 7, 0x15, lbafs...))
	if err != nil {
		t.Fatal(err)
	}
	if ns.BlockSize != 4096 || ns.LBAFormat != 5 || !ns.MetadataAtEnd {
		t.Errorf("%+v", ns)
	}
	if got := FormatCDW10(ns, SESCrypto); got != 0x415 {
		t.Errorf("CDW10 %#x, want 0x415", got)
	}
	// Hostile data: a format index past the count, a silly block size.
	for name, b := range map[string][]byte{
		"index past the formats": nvmeNamespace(1, 1, 0x03, lbafs...),
		"block size 2^3":         nvmeNamespace(1, 0, 0, 3<<16),
		"short":                  make([]byte, 10),
	} {
		if _, err := ParseNVMeNamespace(b); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}

func TestNVMeStatus(t *testing.T) {
	for st, want := range map[int]string{0x0002: "invalid field", 0x010A: "invalid format", 0x0281: "status type 2 code 0x81"} {
		if got := NVMeStatus(st); !strings.Contains(got, want) {
			t.Errorf("%#x: %q, want %q", st, got, want)
		}
	}
}
