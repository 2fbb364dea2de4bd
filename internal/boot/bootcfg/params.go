package bootcfg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Params is what a config is rendered from.
type Params struct {
	Purpose machine.BootPurpose
	// Arch picks GRUB's local-boot loader names; "" is amd64, and MAAS's
	// "amd64/generic" form is accepted.
	Arch string
	// Hostname, SystemID and MAC are only shown (comments, console
	// messages) so a console log says which machine got which config.
	Hostname string
	SystemID string
	MAC      string
	// KernelURL and InitrdURL say where the kernel and initrd are, for
	// enlist, ephemeral and install (see the package comment for the forms
	// each loader takes). They are ignored for local and poweroff.
	KernelURL string
	InitrdURL string
	// KernelParams are rendered in order, space-separated. BOOTIF is added
	// from the loader's own idea of the booting NIC unless one is given.
	KernelParams []string
	LocalBoot    LocalBoot
}

// LocalBoot tunes how purpose local boots the disk. The zero value is what
// works on the widest range of firmware, QEMU's included.
type LocalBoot struct {
	// IPXESanboot makes iPXE try BIOS disks 0x80..0x83 with sanboot before
	// exiting to the firmware. Off by default: exit already makes the BIOS
	// (or UEFI boot manager) try its next device, sanboot works only under
	// BIOS iPXE, and some disks hang in it.
	IPXESanboot bool
	// GRUBExitOnly makes GRUB exit to the firmware's next boot entry at
	// once instead of first looking for an OS loader on a local ESP.
	GRUBExitOnly bool
	// PXELINUXChain boots the disk with chain.c32 (which the TFTP root
	// must then serve) instead of LOCALBOOT 0, for BIOSes whose INT 18h
	// handling LOCALBOOT relies on is broken.
	PXELINUXChain bool
}

// ErrBadParams is wrapped by every Render refusal.
var ErrBadParams = errors.New("bad boot config parameters")

// Limits. The x86 kernel keeps 2048 bytes of command line; what the
// caller passes must leave room for what the templates add (BOOTIF,
// initrd=).
const (
	maxParamLen   = 1024
	maxParams     = 128
	maxCmdlineLen = 1900
)

// paramForbidden are the bytes, beyond whitespace and controls, that some
// loader's config syntax gives a meaning to: iPXE expands ${...} and splits
// on || && ;, GRUB's shell lexer handles quotes, backslash, $, ; | & < >,
// braces and # comments. PXELINUX takes the line literally but gets the
// same set so one rule covers all three.
const paramForbidden = "\"'`\\$;&|<>{}#"

// checkParams validates the caller's kernel parameters and reports whether
// they already hold a BOOTIF.
func checkParams(ps []string) (hasBootIF bool, err error) {
	if len(ps) > maxParams {
		return false, fmt.Errorf("%w: %d kernel parameters, at most %d", ErrBadParams, len(ps), maxParams)
	}
	total := 0
	for _, p := range ps {
		if p == "" || len(p) > maxParamLen {
			return false, fmt.Errorf("%w: kernel parameter of %d bytes (1 to %d)", ErrBadParams, len(p), maxParamLen)
		}
		for i := 0; i < len(p); i++ {
			if c := p[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(paramForbidden, c) >= 0 {
				return false, fmt.Errorf("%w: kernel parameter %q has byte %#02x", ErrBadParams, p, c)
			}
		}
		// The template names the initrd; a second initrd= would make
		// PXELINUX or the EFI stub load some other file.
		if strings.HasPrefix(p, "initrd=") {
			return false, fmt.Errorf("%w: kernel parameter %q: the initrd comes from InitrdURL", ErrBadParams, p)
		}
		hasBootIF = hasBootIF || strings.HasPrefix(p, "BOOTIF=")
		total += len(p) + 1
	}
	if total > maxCmdlineLen {
		return false, fmt.Errorf("%w: kernel parameters take %d bytes, at most %d", ErrBadParams, total, maxCmdlineLen)
	}
	return hasBootIF, nil
}

// checkLabel validates a value that is only displayed.
func checkLabel(name, v string, ok func(string) bool) error {
	if v != "" && !ok(v) {
		return fmt.Errorf("%w: %s %q", ErrBadParams, name, v)
	}
	return nil
}

func isSystemID(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func isHostname(s string) bool { return machine.ValidateHostname(s) == nil }

func isMAC(s string) bool { _, err := machine.NormaliseMAC(s); return err == nil }

// paramsArch accepts "", an alias, or MAAS's "arch/subarch".
func paramsArch(a string) (string, error) {
	if a == "" {
		return "amd64", nil
	}
	base, sub, hasSub := strings.Cut(a, "/")
	if n, ok := normArch(base); ok && (!hasSub || isSubarch(sub)) {
		return n, nil
	}
	return "", fmt.Errorf("%w: architecture %q", ErrBadParams, a)
}
