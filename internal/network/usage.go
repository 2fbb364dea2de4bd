package network

import (
	"math/big"
	"net/netip"
	"slices"
)

// What an address in use is for, in MAAS's words (the purpose of its
// reserved_ip_ranges).
const (
	PurposeGateway  = "gateway-ip"
	PurposeDNS      = "dns-server"
	PurposeReserved = "reserved"
	PurposeDynamic  = "dynamic"
	PurposeAssigned = "assigned-ip"
	PurposeRFC4291  = "rfc-4291-2.6.1"
	PurposeUnused   = "unused"
)

// Span is a run of a subnet's addresses, Start..End inclusive, and what
// they are for.
type Span struct {
	Start, End netip.Addr
	Purposes   []string
}

// Size is how many addresses the span holds (an IPv6 span can hold more
// than 2^64).
func (s Span) Size() *big.Int {
	d := new(big.Int).Sub(new(big.Int).SetBytes(s.End.AsSlice()), new(big.Int).SetBytes(s.Start.AsSlice()))
	return d.Add(d, big.NewInt(1))
}

// held are the spans of s that no AUTO link may take, before any address
// is assigned: the gateway, DNS servers and static routes' routers in the
// subnet, its dynamic ranges, its reserved ranges when it is managed, and
// on IPv6 the first address and, on a /64, the 2^32-1 after it.
func held(n *Network, s Subnet) []Span {
	var out []Span
	one := func(a netip.Addr, purpose string) {
		if s.CIDR.Contains(a) {
			out = append(out, Span{a, a, []string{purpose}})
		}
	}
	one(s.Gateway, PurposeGateway)
	for _, d := range s.DNSServers {
		one(d, PurposeDNS)
	}
	for _, r := range n.Routes {
		if r.SourceID == s.ID {
			one(r.Gateway, PurposeGateway)
		}
	}
	for _, r := range n.RangesOf(s.ID) {
		if r.Type == RangeDynamic || (r.Type == RangeReserved && s.Managed) {
			out = append(out, Span{r.Start, r.End, []string{string(r.Type)}})
		}
	}
	if first := s.CIDR.Masked().Addr(); first.Is6() {
		if s.CIDR.Bits() < 127 {
			out = append(out, Span{first, first, []string{PurposeRFC4291}})
		}
		if s.CIDR.Bits() == 64 {
			end := first.As16()
			end[12], end[13], end[14], end[15] = 0xff, 0xff, 0xff, 0xff
			out = append(out, Span{first.Next(), netip.AddrFrom16(end), []string{PurposeReserved}})
		}
	}
	return out
}

// windows are where s hands out addresses: all its host addresses when
// it is managed, only its reserved ranges when not (MAAS's rule).
func windows(n *Network, s Subnet) []Span {
	lo, hi := hostBounds(s.CIDR)
	if s.Managed {
		return []Span{{lo, hi, nil}}
	}
	var out []Span
	for _, r := range n.RangesOf(s.ID) {
		if r.Type == RangeReserved && !r.End.Less(lo) && !hi.Less(r.Start) {
			out = append(out, Span{maxAddr(r.Start, lo), minAddr(r.End, hi), nil})
		}
	}
	return merge(out)
}

// InUse lists the subnet's addresses in use, as MAAS's
// reserved_ip_ranges: what held says, and the assigned addresses; spans
// that overlap are one, with all their purposes.
func InUse(n *Network, s Subnet, assigned []netip.Addr) []Span {
	spans := held(n, s)
	for _, a := range assigned {
		if s.CIDR.Contains(a) {
			spans = append(spans, Span{a, a, []string{PurposeAssigned}})
		}
	}
	return merge(spans)
}

// Unused lists the subnet's free addresses, as MAAS's
// unreserved_ip_ranges: the windows less what is in use.
func Unused(n *Network, s Subnet, assigned []netip.Addr) []Span {
	used := InUse(n, s, assigned)
	var out []Span
	for _, w := range windows(n, s) {
		a := w.Start
		for _, u := range used {
			if u.End.Less(a) || w.End.Less(u.Start) {
				continue
			}
			if a.Less(u.Start) {
				out = append(out, Span{a, u.Start.Prev(), []string{PurposeUnused}})
			}
			if a = u.End.Next(); !a.IsValid() || w.End.Less(a) {
				break
			}
		}
		if a.IsValid() && !w.End.Less(a) {
			out = append(out, Span{a, w.End, []string{PurposeUnused}})
		}
	}
	return out
}

// merge sorts spans and joins those that overlap.
func merge(spans []Span) []Span {
	slices.SortFunc(spans, func(a, b Span) int { return a.Start.Compare(b.Start) })
	var out []Span
	for _, s := range spans {
		if k := len(out) - 1; k >= 0 && !out[k].End.Less(s.Start) {
			if out[k].End.Less(s.End) {
				out[k].End = s.End
			}
			for _, p := range s.Purposes {
				if !slices.Contains(out[k].Purposes, p) {
					out[k].Purposes = append(out[k].Purposes, p)
				}
			}
			slices.Sort(out[k].Purposes)
			continue
		}
		s.Purposes = slices.Clone(s.Purposes)
		out = append(out, s)
	}
	return out
}

// Windows are the spans of s that AUTO links are given addresses from.
func Windows(n *Network, s Subnet) []Span { return windows(n, s) }

// HostBounds are the lowest and highest addresses of p a host may hold.
func HostBounds(p netip.Prefix) (lo, hi netip.Addr) { return hostBounds(p) }
