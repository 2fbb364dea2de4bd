package agentapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
)

// EnrolFor is the enrolment value a rack puts on the kernel command line
// of a boot it served to addr: the machine's one-time secret bound to the
// address that fetched it. The region accepts it only in a hello from that
// same address, so a copy read off the wire or the console is useless
// elsewhere, and the raw secret never leaves the region and its racks.
func EnrolFor(secret, addr string) string {
	if secret == "" || addr == "" {
		return ""
	}
	// One address, one spelling: a dual-stack socket reports
	// 192.0.2.7 as ::ffff:192.0.2.7.
	if a, err := netip.ParseAddr(addr); err == nil {
		addr = a.Unmap().WithZone("").String()
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("anvil-enrol\x00" + addr))
	return hex.EncodeToString(m.Sum(nil))
}
