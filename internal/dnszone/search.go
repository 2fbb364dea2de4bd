package dnszone

import (
	"slices"
	"strings"
)

// SearchList is the DNS search list a machine is given, as MAAS builds
// it: first (the machine's own domain, or the default domain for DHCP),
// then the other authoritative domains in name order, each once.
func SearchList(first string, authoritative []string) []string {
	first = strings.TrimSuffix(first, ".")
	var out []string
	if first != "" {
		out = append(out, first)
	}
	rest := slices.Clone(authoritative)
	slices.Sort(rest)
	for _, d := range rest {
		d = strings.TrimSuffix(d, ".")
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
