package diskerase

import (
	"fmt"
	"strings"
)

// Mode is how a release asked for the disks to be erased, in the words
// the region sends: quick, full, secure, or secure-quick (secure_erase
// and quick_erase both set).
type Mode string

const (
	Quick       Mode = "quick"
	Full        Mode = "full"
	Secure      Mode = "secure"
	SecureQuick Mode = "secure-quick"
)

// ParseMode checks a mode from the region; empty is quick, as before
// the region said.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return Quick, nil
	case Quick, Full, Secure, SecureQuick:
		return m, nil
	}
	return "", fmt.Errorf("unknown erase mode %q", s)
}

// WantsSecure says whether the disks' own secure erase is tried first.
func (m Mode) WantsSecure() bool { return m == Secure || m == SecureQuick }

// Fallback is what a disk gets without a secure erase, as MAAS's wipe
// script does: quick when quick_erase was set too, else every block.
func (m Mode) Fallback() Method {
	if m == Quick || m == SecureQuick {
		return MethodQuick
	}
	return MethodZero
}

// Kind is the command set a disk's secure erase would go through, from
// its kernel name: NVMe namespaces (nvme0n1), SCSI/SATA disks (sda),
// which may be ATA behind libata, and everything else (virtio, Xen, MMC)
// which has none.
type Kind int

const (
	KindNone Kind = iota
	KindNVMe
	KindATA
)

// KindOf is the kind of the disk named name.
func KindOf(name string) Kind {
	switch {
	case strings.HasPrefix(name, "nvme"):
		return KindNVMe
	case strings.HasPrefix(name, "sd"):
		return KindATA
	}
	return KindNone
}

// NoSecureErase is why the disk name has no secure erase before any
// command is sent, or "" when one is worth trying.
func NoSecureErase(name string) string {
	if KindOf(name) != KindNone {
		return ""
	}
	bus := "this kind of disk"
	switch {
	case strings.HasPrefix(name, "vd"):
		bus = "virtio disks"
	case strings.HasPrefix(name, "xvd"):
		bus = "Xen disks"
	case strings.HasPrefix(name, "mmcblk"):
		bus = "MMC disks"
	}
	return bus + " have no secure erase"
}

// Method is how one disk was erased.
type Method string

const (
	MethodNVMeUser   Method = "secure erase (NVMe Format, user data)"
	MethodNVMeCrypto Method = "secure erase (NVMe Format, cryptographic)"
	MethodATA        Method = "secure erase (ATA SECURITY ERASE UNIT)"
	MethodATAEnh     Method = "secure erase (ATA SECURITY ERASE UNIT, enhanced)"
	MethodZero       Method = "zeroed every block"
	MethodQuick      Method = "quick erase (first and last 2 MiB zeroed)"
)

// NVMeMethod names the Format a secure erase setting does.
func NVMeMethod(ses int) Method {
	if ses == SESCrypto {
		return MethodNVMeCrypto
	}
	return MethodNVMeUser
}

// ATAMethod names the erase SECURITY ERASE UNIT did.
func ATAMethod(enhanced bool) Method {
	if enhanced {
		return MethodATAEnh
	}
	return MethodATA
}

// Result is one disk's line in the release's event: the method used and,
// for a secure erase that was asked for and not done, why.
type Result struct {
	Disk   string
	Method Method
	Why    string
}

func (r Result) String() string {
	if r.Why != "" {
		return fmt.Sprintf("%s: %s (no secure erase: %s)", r.Disk, r.Method, r.Why)
	}
	return fmt.Sprintf("%s: %s", r.Disk, r.Method)
}

// Summary is the event text for all disks, one clause each.
func Summary(rs []Result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	if len(parts) == 0 {
		return "no disks to erase"
	}
	return strings.Join(parts, "; ")
}
