// Package dnsname checks host names: one place for the rules, which
// settings (NTP servers, proxies), BMC addresses and, later, DNS records
// all apply.
package dnsname

import "strings"

// Valid says whether h is a host name by RFC 1123: dot-separated labels of
// letters, digits and hyphens, 1 to 63 characters each, not starting or
// ending with a hyphen, 253 characters at most; one trailing dot allowed.
func Valid(h string) bool { return valid(h, false) }

// ValidLoose is Valid that also allows underscores, which real BMC and
// management host names carry and resolvers accept.
func ValidLoose(h string) bool { return valid(h, true) }

func valid(h string, underscore bool) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			ok := r == '-' || r == '_' && underscore || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
			if !ok {
				return false
			}
		}
	}
	return true
}
