package diskerase

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// NVMe admin opcodes and the Identify data size (NVM Express base
// specification, "Admin Command Set").
const (
	NVMeOpIdentify  = 0x06
	NVMeOpFormatNVM = 0x80
	NVMeIdentifyLen = 4096

	nvmeCNSNamespace  = 0x00
	nvmeCNSController = 0x01
)

// NVMeController is what Identify Controller says about erasing.
type NVMeController struct {
	Serial, Model string
	// Format is OACS bit 1: the controller takes Format NVM.
	Format bool
	// SanitizeCrypto, SanitizeBlock and SanitizeOverwrite are SANICAP
	// bits 0-2, reported for the record: Format NVM is what is sent.
	SanitizeCrypto, SanitizeBlock, SanitizeOverwrite bool
	// CryptoErase is FNA bit 2: Format NVM can erase cryptographically.
	CryptoErase bool
	// FormatAllNamespaces is FNA bit 0: a Format applies to every
	// namespace of the controller, not just the one named.
	FormatAllNamespaces bool
	// WriteZeroes is ONCS bit 3.
	WriteZeroes bool
}

// NVMeNamespace is what Identify Namespace says about the current format.
type NVMeNamespace struct {
	Blocks uint64 // NSZE
	// LBAFormat is the format in use (FLBAS bits 3:0, and bits 6:5 as
	// its upper bits when more than 16 formats exist) and MetadataAtEnd
	// FLBAS bit 4: a Format keeps both, so only the data goes.
	LBAFormat     uint8
	MetadataAtEnd bool
	BlockSize     int64 // 2^LBADS of the format in use
}

// IdentifyControllerCDW10 and IdentifyNamespaceCDW10 are the CNS values
// of the two Identify commands.
func IdentifyControllerCDW10() uint32 { return nvmeCNSController }
func IdentifyNamespaceCDW10() uint32  { return nvmeCNSNamespace }

// ParseNVMeController reads an Identify Controller data structure.
func ParseNVMeController(b []byte) (NVMeController, error) {
	if len(b) < NVMeIdentifyLen {
		return NVMeController{}, fmt.Errorf("identify controller: %d bytes, want %d", len(b), NVMeIdentifyLen)
	}
	oacs := binary.LittleEndian.Uint16(b[256:258])
	sanicap := binary.LittleEndian.Uint32(b[328:332])
	oncs := binary.LittleEndian.Uint16(b[520:522])
	fna := b[524]
	return NVMeController{
		Serial:              ataString(b[4:24]),
		Model:               ataString(b[24:64]),
		Format:              oacs&(1<<1) != 0,
		SanitizeCrypto:      sanicap&(1<<0) != 0,
		SanitizeBlock:       sanicap&(1<<1) != 0,
		SanitizeOverwrite:   sanicap&(1<<2) != 0,
		FormatAllNamespaces: fna&(1<<0) != 0,
		CryptoErase:         fna&(1<<2) != 0,
		WriteZeroes:         oncs&(1<<3) != 0,
	}, nil
}

// ParseNVMeNamespace reads an Identify Namespace data structure.
func ParseNVMeNamespace(b []byte) (NVMeNamespace, error) {
	if len(b) < NVMeIdentifyLen {
		return NVMeNamespace{}, fmt.Errorf("identify namespace: %d bytes, want %d", len(b), NVMeIdentifyLen)
	}
	nlbaf := int(b[25]) + 1 // zero-based count
	flbas := b[26]
	idx := flbas&0x0F | (flbas>>5&0x03)<<4
	if int(idx) >= nlbaf || int(idx) >= 64 {
		return NVMeNamespace{}, fmt.Errorf("identify namespace: format %d in use but %d formats", idx, nlbaf)
	}
	lbaf := binary.LittleEndian.Uint32(b[128+4*int(idx):])
	lbads := lbaf >> 16 & 0xFF
	if lbads < 9 || lbads > 16 {
		return NVMeNamespace{}, fmt.Errorf("identify namespace: block size 2^%d", lbads)
	}
	return NVMeNamespace{
		Blocks:        binary.LittleEndian.Uint64(b[0:8]),
		LBAFormat:     idx,
		MetadataAtEnd: flbas&(1<<4) != 0,
		BlockSize:     1 << lbads,
	}, nil
}

// NVMe Format NVM secure erase settings (CDW10 bits 11:9).
const (
	SESNone     = 0
	SESUserData = 1
	SESCrypto   = 2
)

// FormatCDW10 is Format NVM's CDW10: the namespace keeps its LBA format
// and metadata setting, protection information is off, and ses says
// which secure erase the drive does.
func FormatCDW10(ns NVMeNamespace, ses int) uint32 {
	v := uint32(ns.LBAFormat&0x0F) | uint32(ns.LBAFormat>>4&0x03)<<12
	if ns.MetadataAtEnd {
		v |= 1 << 4
	}
	return v | uint32(ses&0x7)<<9
}

// NVMeSES picks the secure erase setting: a cryptographic erase when the
// controller has one (it ends with the key, so every copy of the data,
// including blocks the drive has retired), else a user data erase.
func NVMeSES(c NVMeController) int {
	if c.CryptoErase {
		return SESCrypto
	}
	return SESUserData
}

// NVMeStatus explains a completion status the ioctl returned (Status
// Code Type in bits 10:8, Status Code in 7:0).
func NVMeStatus(status int) string {
	sct, sc := status>>8&0x7, status&0xFF
	if sct == 0 {
		switch sc {
		case 0x01:
			return "invalid command opcode"
		case 0x02:
			return "invalid field in command"
		case 0x0A:
			return "invalid format"
		case 0x0B:
			return "invalid namespace or format"
		case 0x1D:
			return "sanitize in progress"
		}
	}
	if sct == 1 && sc == 0x0A {
		return "invalid format"
	}
	return fmt.Sprintf("status type %d code %#x", sct, sc)
}

// ataString trims an identify string: ASCII, space padded.
func ataString(b []byte) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7E {
			return -1
		}
		return r
	}, string(b)))
}
