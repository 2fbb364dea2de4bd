package network

import (
	"fmt"
	"net/netip"
)

// NextFree is the address an AUTO link gets on s, as MAAS chooses it: the
// lowest address of s's windows (all of a managed subnet, the reserved
// ranges of an unmanaged one) that held does not keep and used does not
// report. IPv4's network and broadcast addresses are never hosts'. The
// store makes the choice stick with a unique constraint; on a conflict it
// asks again with the winner used.
func NextFree(n *Network, s Subnet, used Used) (netip.Addr, error) {
	if !s.CIDR.IsValid() {
		return netip.Addr{}, fmt.Errorf("subnet %d has no CIDR", s.ID)
	}
	kept := held(n, s)
	for _, w := range windows(n, s) {
		for a := w.Start; a.IsValid() && a.Compare(w.End) <= 0; {
			if k, in := spanHolding(kept, a); in {
				// Jump past the span: a large reserved range costs one step.
				a = k.End.Next()
				continue
			}
			if used == nil || !used(a) {
				return a, nil
			}
			a = a.Next()
		}
	}
	return netip.Addr{}, fmt.Errorf("No more IPs available in subnet: %s.", s.CIDR)
}

func spanHolding(spans []Span, a netip.Addr) (Span, bool) {
	for _, s := range spans {
		if !a.Less(s.Start) && !s.End.Less(a) {
			return s, true
		}
	}
	return Span{}, false
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
