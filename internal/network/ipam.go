package network

import (
	"fmt"
	"net/netip"
)

// NextFree is the address an AUTO link gets on s: the lowest host address
// that is not the gateway or one of the subnet's DNS servers, outside the
// subnet's dynamic and reserved ranges, and not used. The store makes the
// choice stick with a unique constraint; on a conflict it asks again with
// the winner counted as used.
func NextFree(n *Network, s Subnet, used Used) (netip.Addr, error) {
	if !s.CIDR.IsValid() {
		return netip.Addr{}, fmt.Errorf("subnet %d has no CIDR", s.ID)
	}
	var ranges []IPRange
	for _, r := range n.RangesOf(s.ID) {
		if r.Type == RangeDynamic || r.Type == RangeReserved {
			ranges = append(ranges, r)
		}
	}
	taken := func(a netip.Addr) bool {
		if a == s.Gateway || (used != nil && used(a)) {
			return true
		}
		for _, d := range s.DNSServers {
			if a == d {
				return true
			}
		}
		return false
	}
	lo, hi := hostBounds(s.CIDR)
	for a := lo; a.IsValid() && a.Compare(hi) <= 0; {
		if r, in := rangeHolding(ranges, a); in {
			// Jump past the range: a large reserved range costs one step.
			a = r.End.Next()
			continue
		}
		if !taken(a) {
			return a, nil
		}
		a = a.Next()
	}
	return netip.Addr{}, fmt.Errorf("No more IPs available in subnet: %s.", s.CIDR)
}

func rangeHolding(ranges []IPRange, a netip.Addr) (IPRange, bool) {
	for _, r := range ranges {
		if r.Contains(a) {
			return r, true
		}
	}
	return IPRange{}, false
}
