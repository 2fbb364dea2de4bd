package diskerase

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// ataIdentify builds IDENTIFY DEVICE data: words by index, and the model
// and serial as drives send them (each word's bytes swapped).
func ataIdentify(words map[int]uint16, model, serial string) []byte {
	b := make([]byte, ATASectorLen)
	for i, v := range words {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	put := func(off, n int, s string) {
		f := []byte(s + string(bytes.Repeat([]byte(" "), n)))[:n]
		for i := 0; i < n; i += 2 {
			b[off+i], b[off+i+1] = f[i+1], f[i]
		}
	}
	put(20, 20, serial)
	put(54, 40, model)
	return b
}

func TestParseATAIdentify(t *testing.T) {
	// QEMU's IDE disk: no security feature set (word 82 bit 1 clear,
	// word 128 zero).
	s, err := ParseATAIdentify(ataIdentify(map[int]uint16{0: 0x0040, 82: 0x4021, 83: 0x7400}, "QEMU HARDDISK", "anvil-sata-0"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Supported || s.Model != "QEMU HARDDISK" || s.Serial != "anvil-sata-0" {
		t.Errorf("%+v", s)
	}
	if ok, why := s.Usable(); ok || why != "the drive does not support ATA security erase" {
		t.Errorf("usable %v %q", ok, why)
	}
	// A drive with security and enhanced erase, not frozen: 2 and 4
	// minutes (words 89/90 in units of 2 minutes).
	s, _ = ParseATAIdentify(ataIdentify(map[int]uint16{82: 0x4002, 83: 0x4000, 89: 1, 90: 2, 128: 0x0021}, "SSD", "S1"))
	if !s.Supported || !s.Enhanced || s.Frozen || s.EraseTime != 2*time.Minute || s.EnhancedEraseTime != 4*time.Minute {
		t.Errorf("%+v", s)
	}
	if ok, _ := s.Usable(); !ok {
		t.Error("not usable")
	}
	if got := s.EraseTimeout(true); got != 10*time.Minute {
		t.Errorf("timeout %s, want the 10 minute floor", got)
	}
	// Extended time format (bit 15): 300 units = 600 minutes, doubled.
	s, _ = ParseATAIdentify(ataIdentify(map[int]uint16{89: 0x8000 | 300, 128: 0x0001}, "HDD", "S2"))
	if s.EraseTimeout(false) != 1200*time.Minute {
		t.Errorf("timeout %s", s.EraseTimeout(false))
	}
	// Frozen (as most BIOSes leave drives), locked, password set.
	for word, want := range map[uint16]string{0x0009: "frozen", 0x0005: "locked", 0x0003: "already has a security password", 0x0011: "expired"} {
		s, _ := ParseATAIdentify(ataIdentify(map[int]uint16{128: word}, "X", "Y"))
		if ok, why := s.Usable(); ok || !bytes.Contains([]byte(why), []byte(want)) {
			t.Errorf("word 128 %#x: usable %v %q, want %q", word, ok, why, want)
		}
	}
	// An ATAPI device, and short data.
	if _, err := ParseATAIdentify(ataIdentify(map[int]uint16{0: 0x8580}, "CD", "Z")); err == nil {
		t.Error("ATAPI taken")
	}
	if _, err := ParseATAIdentify(make([]byte, 100)); err == nil {
		t.Error("short data taken")
	}
}

func TestPassThroughCDB(t *testing.T) {
	for _, c := range []struct {
		cmd     byte
		in, out bool
		want    []byte
	}{
		// The blocks sg3_utils' sg_sat_identify and hdparm send.
		{ATAIdentify, true, false, []byte{0x85, 0x08, 0x0E, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40, 0xEC, 0}},
		{ATASecurityEraseUnit, false, true, []byte{0x85, 0x0A, 0x06, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x40, 0xF4, 0}},
		{ATASecurityErasePrep, false, false, []byte{0x85, 0x06, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0xF3, 0}},
	} {
		if got := PassThroughCDB(c.cmd, c.in, c.out); !bytes.Equal(got, c.want) {
			t.Errorf("%#x: % x, want % x", c.cmd, got, c.want)
		}
	}
}

func TestPasswordBlock(t *testing.T) {
	b, err := PasswordBlock("0123456789abcdef0123456789abcdef", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 512 || b[0] != 0x02 || string(b[2:34]) != "0123456789abcdef0123456789abcdef" || b[34] != 0 {
		t.Errorf("% x", b[:40])
	}
	for _, pw := range []string{"", "0123456789abcdef0123456789abcdef!"} {
		if _, err := PasswordBlock(pw, false); err == nil {
			t.Errorf("password of %d bytes taken", len(pw))
		}
	}
}

func TestSenseError(t *testing.T) {
	ok := [][]byte{
		nil,
		// Descriptor sense, RECOVERED ERROR 00/1D with an ATA status
		// return descriptor whose status is 0x50 (DRDY, DSC).
		{0x72, 0x01, 0x00, 0x1D, 0, 0, 0, 14, 0x09, 0x0C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x50},
		{0x70, 0, 0x00, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0},
	}
	for _, sb := range ok {
		if err := SenseError(sb); err != nil {
			t.Errorf("% x: %v", sb, err)
		}
	}
	bad := [][]byte{
		// ABORTED COMMAND with the ATA status ERR bit: the command was
		// refused (as a frozen drive refuses SECURITY SET PASSWORD).
		{0x72, 0x0B, 0x00, 0x00, 0, 0, 0, 14, 0x09, 0x0C, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x51},
		// ILLEGAL REQUEST, invalid opcode: not an ATA device behind SAT.
		{0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x20, 0x00},
	}
	for _, sb := range bad {
		if err := SenseError(sb); err == nil {
			t.Errorf("% x: no error", sb)
		}
	}
}
