package bootcfg

import "strings"

// The name forms below are MAAS's (src/provisioningserver/boot/*.py), so
// DHCP options and firmware set up for MAAS find their configs here, plus
// the names GRUB's own netboot search tries (01-<mac>, hex IP), which MAAS
// leaves to its top file.

// matchIPXE: ipxe.cfg (MAAS's chain file; here the amd64 default),
// ipxe.cfg-<mac> (colons from ${mac}, dashes from ${mac:hexhyp}),
// ipxe.cfg-default[-<arch>[-<subarch>]].
func matchIPXE(p string) (Request, bool) {
	if p == "ipxe.cfg" {
		return Request{Kind: IPXE, Arch: "amd64", Default: true}, true
	}
	rest, ok := strings.CutPrefix(p, "ipxe.cfg-")
	if !ok {
		return Request{}, false
	}
	if mac, ok := parseMAC(rest); ok {
		return Request{Kind: IPXE, MAC: mac}, true
	}
	return matchDefault(IPXE, rest, '-')
}

// matchGRUB: grub/grub.cfg (the top file), grub/grub.cfg-<mac> (colons
// from $net_default_mac), grub/grub.cfg-01-<mac-dashes> and hex-IP names
// (GRUB's built-in search), grub/grub.cfg-default[-<arch>[-<subarch>]]
// with GRUB's $grub_cpu names translated.
func matchGRUB(p string) (Request, bool) {
	if p == "grub/grub.cfg" {
		return Request{Kind: GRUB, Top: true}, true
	}
	rest, ok := strings.CutPrefix(p, "grub/grub.cfg-")
	if !ok {
		return Request{}, false
	}
	if mac, ok := parseMAC(rest); ok {
		return Request{Kind: GRUB, MAC: mac}, true
	}
	if mac, ok := parseARPMAC(rest); ok {
		return Request{Kind: GRUB, MAC: mac}, true
	}
	// GRUB tries IPv6 addresses too, hence up to 32 digits.
	if isHex(rest, 32) {
		return Request{Kind: GRUB, HexIP: strings.ToUpper(rest)}, true
	}
	return matchDefault(GRUB, rest, '-')
}

// matchPXELINUX: pxelinux.cfg/<uuid>, pxelinux.cfg/01-<mac-dashes>, the
// hex-IP names (IPv4 only), pxelinux.cfg/default and MAAS's
// default[-.]<arch>[-<subarch>].
func matchPXELINUX(p string) (Request, bool) {
	rest, ok := strings.CutPrefix(p, "pxelinux.cfg/")
	if !ok {
		return Request{}, false
	}
	if uuid, ok := parseUUID(rest); ok {
		return Request{Kind: PXELINUX, UUID: uuid}, true
	}
	if mac, ok := parseARPMAC(rest); ok {
		return Request{Kind: PXELINUX, MAC: mac}, true
	}
	if isHex(rest, 8) {
		return Request{Kind: PXELINUX, HexIP: strings.ToUpper(rest)}, true
	}
	if r, ok := matchDefault(PXELINUX, rest, '.'); ok {
		return r, true
	}
	return matchDefault(PXELINUX, rest, '-')
}

// matchDefault parses "default", "default<sep><arch>" and
// "default<sep><arch>-<subarch>". A bare "default" is amd64: the only
// arch whose loaders ask without saying theirs (BIOS PXELINUX, and iPXE
// chained by MAAS's ipxe.cfg).
func matchDefault(k Kind, s string, sep byte) (Request, bool) {
	if s == "default" {
		return Request{Kind: k, Arch: "amd64", Default: true}, true
	}
	rest, ok := strings.CutPrefix(s, "default"+string(sep))
	if !ok {
		return Request{}, false
	}
	a, sub, _ := strings.Cut(rest, "-")
	arch, ok := normArch(a)
	if !ok || (sub != "" && !isSubarch(sub)) || strings.HasSuffix(rest, "-") {
		return Request{}, false
	}
	return Request{Kind: k, Arch: arch, Subarch: sub, Default: true}, true
}

// archAliases maps the names loaders use ($grub_cpu, iPXE's
// ${buildarch}, uname) to the Debian names Anvil uses, as MAAS does.
var archAliases = map[string]string{
	"x86_64": "amd64", "x64": "amd64",
	"aarch64": "arm64",
	"i686":    "i386", "i586": "i386", "x86": "i386", "ia32": "i386",
	"ppc64le": "ppc64el", "ppc64": "ppc64el", "powerpc": "ppc64el",
	"arm": "armhf", "arm32": "armhf",
}

// normArch translates an alias and accepts any other well-formed name
// (lower-case letters, digits, '_'; at most 16): whether Anvil has images
// for it is the server's question, not the parser's.
func normArch(a string) (string, bool) {
	a = strings.ToLower(a)
	if n, ok := archAliases[a]; ok {
		return n, true
	}
	if a == "" || len(a) > 16 || a[0] < 'a' || a[0] > 'z' {
		return "", false
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return "", false
		}
	}
	return a, true
}

// isSubarch accepts MAAS subarch names (generic, hwe-22.04, ga-24.04,
// xgene-uboot-mustang): lower-case letters and digits, with '_', '.' and
// '-' inside.
func isSubarch(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_.-", c) >= 0 && i > 0) {
			return false
		}
	}
	return s != "" && strings.IndexByte("_.-", s[len(s)-1]) < 0
}

// parseMAC accepts six hex pairs joined by ':' or by '-' (one separator
// throughout), any case, and returns the lower-case colon form.
func parseMAC(s string) (string, bool) {
	if len(s) != 17 {
		return "", false
	}
	sep := s[2]
	if sep != ':' && sep != '-' {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != sep {
				return "", false
			}
			b.WriteByte(':')
			continue
		}
		if !isHexByte(c) {
			return "", false
		}
		b.WriteByte(lower(c))
	}
	return b.String(), true
}

// parseARPMAC accepts PXELINUX's "01-aa-bb-cc-dd-ee-ff": ARP hardware type
// 1 (Ethernet), then the MAC with dashes. Other hardware types are not
// Ethernet and Anvil does not boot them.
func parseARPMAC(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "01-")
	if !ok || len(rest) != 17 || rest[2] != '-' {
		return "", false
	}
	return parseMAC(rest)
}

// parseUUID accepts the 8-4-4-4-12 hex form, any case, returning lower.
func parseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
			b.WriteByte(c)
		default:
			if !isHexByte(c) {
				return "", false
			}
			b.WriteByte(lower(c))
		}
	}
	return b.String(), true
}

func isHex(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexByte(s[i]) {
			return false
		}
	}
	return true
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
