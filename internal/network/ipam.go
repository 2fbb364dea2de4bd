package network

import (
	"fmt"
	"net/netip"
	"slices"
)

// NextFree is the address an AUTO link gets on s, as MAAS chooses it: the
// lowest address that is free. Not free: the gateway, the subnet's DNS
// servers, the routers of static routes from s, the dynamic and reserved
// ranges, what used reports, an IPv4 subnet's network and broadcast
// addresses, an IPv6 subnet's first address (RFC 4291's subnet-router
// anycast) and, on a /64, the next 2^32-1 (MAAS keeps them for the
// network's own hosts). On an unmanaged subnet MAAS hands out only
// addresses inside reserved ranges. The store makes the choice stick with
// a unique constraint; on a conflict it asks again with the winner used.
func NextFree(n *Network, s Subnet, used Used) (netip.Addr, error) {
	if !s.CIDR.IsValid() {
		return netip.Addr{}, fmt.Errorf("subnet %d has no CIDR", s.ID)
	}
	lo, hi := hostBounds(s.CIDR)
	var blocked, windows []IPRange
	for _, r := range n.RangesOf(s.ID) {
		switch {
		case r.Type == RangeDynamic || (r.Type == RangeReserved && s.Managed):
			blocked = append(blocked, r)
		case r.Type == RangeReserved:
			windows = append(windows, IPRange{Start: maxAddr(r.Start, lo), End: minAddr(r.End, hi)})
		}
	}
	if s.Managed {
		windows = []IPRange{{Start: lo, End: hi}}
	}
	if s.CIDR.Addr().Is6() && s.CIDR.Bits() == 64 {
		first := s.CIDR.Masked().Addr()
		end := first.As16()
		end[12], end[13], end[14], end[15] = 0xff, 0xff, 0xff, 0xff
		blocked = append(blocked, IPRange{Start: first.Next(), End: netip.AddrFrom16(end)})
	}
	taken := map[netip.Addr]bool{s.Gateway: true}
	for _, d := range s.DNSServers {
		taken[d] = true
	}
	for _, r := range n.Routes {
		if r.SourceID == s.ID {
			taken[r.Gateway] = true
		}
	}
	slices.SortFunc(windows, func(a, b IPRange) int { return a.Start.Compare(b.Start) })
	for _, w := range windows {
		for a := w.Start; a.IsValid() && a.Compare(w.End) <= 0; {
			if r, in := rangeHolding(blocked, a); in {
				// Jump past the range: a large reserved range costs one step.
				a = r.End.Next()
				continue
			}
			if !taken[a] && (used == nil || !used(a)) {
				return a, nil
			}
			a = a.Next()
		}
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

func maxAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return b
	}
	return a
}

func minAddr(a, b netip.Addr) netip.Addr {
	if a.Less(b) {
		return a
	}
	return b
}
