package diskerase

import (
	"encoding/binary"
	"fmt"
	"time"
)

// ATA commands of the security feature set (ACS-3, 7.x).
const (
	ATAIdentify            = 0xEC
	ATASecuritySetPassword = 0xF1
	ATASecurityErasePrep   = 0xF3
	ATASecurityEraseUnit   = 0xF4
	ATASecurityDisable     = 0xF6
	ATASectorLen           = 512
)

// ATASecurity is what IDENTIFY DEVICE says of the security feature set.
type ATASecurity struct {
	Model, Serial string
	// Supported is word 82 bit 1 (or word 128 bit 0).
	Supported, Enabled, Locked, Frozen, CountExpired bool
	Enhanced                                         bool // word 128 bit 5
	// EraseTime and EnhancedEraseTime are words 89 and 90: how long the
	// drive says its erase takes; zero when it does not say.
	EraseTime, EnhancedEraseTime time.Duration
}

// ParseATAIdentify reads the 512 bytes of IDENTIFY DEVICE (256
// little-endian words).
func ParseATAIdentify(b []byte) (ATASecurity, error) {
	if len(b) < ATASectorLen {
		return ATASecurity{}, fmt.Errorf("identify device: %d bytes, want %d", len(b), ATASectorLen)
	}
	w := func(i int) uint16 { return binary.LittleEndian.Uint16(b[2*i:]) }
	// Word 0 bit 15 set is an ATAPI (packet) device, not a disk.
	if w(0)&(1<<15) != 0 {
		return ATASecurity{}, fmt.Errorf("identify device: not an ATA disk (word 0 %#04x)", w(0))
	}
	sec := w(128)
	// Words 82 and 128 are valid when bits 15:14 of 83 are 01 and word
	// 128 is not 0xFFFF (no data).
	valid82 := w(83)>>14 == 1
	s := ATASecurity{
		Model:  ataSwapped(b[54:94]),
		Serial: ataSwapped(b[20:40]),
	}
	if sec != 0xFFFF {
		s.Supported = sec&(1<<0) != 0 || valid82 && w(82)&(1<<1) != 0
		s.Enabled = sec&(1<<1) != 0
		s.Locked = sec&(1<<2) != 0
		s.Frozen = sec&(1<<3) != 0
		s.CountExpired = sec&(1<<4) != 0
		s.Enhanced = sec&(1<<5) != 0
	}
	s.EraseTime = ataEraseTime(w(89))
	s.EnhancedEraseTime = ataEraseTime(w(90))
	return s, nil
}

// ataEraseTime decodes words 89/90: with bit 15 set, bits 14:0 count
// units of 2 minutes; otherwise bits 7:0 do. The largest value means
// "longer than it can say".
func ataEraseTime(v uint16) time.Duration {
	n := v & 0xFF
	max := uint16(0xFF)
	if v&(1<<15) != 0 {
		n, max = v&0x7FFF, 0x7FFF
	}
	if n == max {
		n = max + 1 // at least this long; the caller adds a margin
	}
	return time.Duration(n) * 2 * time.Minute
}

// ataSwapped reads an IDENTIFY string: each word's two bytes are swapped.
func ataSwapped(b []byte) string {
	c := make([]byte, len(b))
	for i := 0; i+1 < len(b); i += 2 {
		c[i], c[i+1] = b[i+1], b[i]
	}
	return ataString(c)
}

// Whether an ATA disk can be securely erased now, and if not why not.
func (s ATASecurity) Usable() (bool, string) {
	switch {
	case !s.Supported:
		return false, "the drive does not support ATA security erase"
	case s.Frozen:
		return false, "the drive's security is frozen"
	case s.Locked:
		return false, "the drive is locked"
	case s.Enabled:
		return false, "the drive already has a security password"
	case s.CountExpired:
		return false, "the drive's password attempt count has expired"
	}
	return true, ""
}

// EraseTimeout is how long to wait for SECURITY ERASE UNIT: the drive's
// own figure doubled (with a floor for drives that say little), since
// the command is answered only once the erase is done.
func (s ATASecurity) EraseTimeout(enhanced bool) time.Duration {
	t := s.EraseTime
	if enhanced {
		t = s.EnhancedEraseTime
	}
	return max(2*t, 10*time.Minute)
}

// ATA PASS-THROUGH (16) protocols (SAT-4).
const (
	protoNonData = 3
	protoPIOIn   = 4
	protoPIOOut  = 5
)

// PassThroughCDB is an ATA PASS-THROUGH (16) command block for cmd: PIO
// data in or out of one 512-byte block when dataIn/dataOut, else none.
func PassThroughCDB(cmd byte, dataIn, dataOut bool) []byte {
	cdb := make([]byte, 16)
	cdb[0] = 0x85
	switch {
	case dataIn:
		cdb[1] = protoPIOIn << 1
		cdb[2] = 1<<3 | 1<<2 | 2 // from the device, count in blocks, length in the count field
		cdb[6] = 1
	case dataOut:
		cdb[1] = protoPIOOut << 1
		cdb[2] = 1<<2 | 2
		cdb[6] = 1
	default:
		cdb[1] = protoNonData << 1
		cdb[2] = 1 << 5 // return the ATA registers, to check the command ran
	}
	cdb[13] = 1 << 6 // LBA mode
	cdb[14] = cmd
	return cdb
}

// PasswordBlock is the 512 bytes SECURITY SET PASSWORD, SECURITY ERASE
// UNIT and SECURITY DISABLE PASSWORD send: the user password (word 0 bit
// 0 clear), for an erase the enhanced flag (bit 1), and the password in
// words 1-16.
func PasswordBlock(password string, enhanced bool) ([]byte, error) {
	if len(password) == 0 || len(password) > 32 {
		return nil, fmt.Errorf("ATA password of %d bytes (1 to 32)", len(password))
	}
	b := make([]byte, ATASectorLen)
	if enhanced {
		b[0] = 1 << 1
	}
	copy(b[2:34], password)
	return b, nil
}

// SenseError reads a SCSI sense buffer after an ATA pass-through: nil
// when the command went through (no sense, or the ATA status return
// descriptor with neither ERR nor DF), else what went wrong.
func SenseError(sb []byte) error {
	if len(sb) < 8 {
		return nil
	}
	var key, asc, ascq byte
	switch sb[0] & 0x7F {
	case 0x72, 0x73: // descriptor format
		key, asc, ascq = sb[1]&0x0F, sb[2], sb[3]
		// The ATA Status Return descriptor (code 9) carries the status.
		for i := 8; i+1 < len(sb) && i < 8+int(sb[7]); i += 2 + int(sb[i+1]) {
			if sb[i] == 0x09 && i+13 < len(sb) {
				if st := sb[i+13]; st&0x21 != 0 {
					return fmt.Errorf("ATA status %#02x error %#02x", st, sb[i+3])
				}
			}
		}
	case 0x70, 0x71: // fixed format
		key = sb[2] & 0x0F
		if len(sb) > 13 {
			asc, ascq = sb[12], sb[13]
		}
	default:
		return nil
	}
	// NO SENSE and RECOVERED ERROR with "ATA pass-through information
	// available" (00/1D) are the answer to a successful command that
	// asked for its registers back.
	if key == 0 || key == 1 && asc == 0 && ascq == 0x1D {
		return nil
	}
	return fmt.Errorf("sense key %#x asc %#02x ascq %#02x", key, asc, ascq)
}
