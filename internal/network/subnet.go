package network

import "net/netip"

// ValidateSubnet checks a subnet: a CIDR with no host bits, a gateway and
// DNS servers of its family (the gateway inside it, or an IPv6 link-local
// address as routers announce), and no overlap with another subnet.
func ValidateSubnet(n *Network, s Subnet) FieldErrors {
	var e FieldErrors
	if !s.CIDR.IsValid() {
		e.Add("cidr", "This field is required.")
		return e
	}
	if s.CIDR.Masked() != s.CIDR {
		e.Add("cidr", "%s has host bits set; the network is %s.", s.CIDR, s.CIDR.Masked())
	}
	if g := s.Gateway; g.IsValid() && !s.CIDR.Contains(g) && !(g.Is6() && g.IsLinkLocalUnicast() && s.CIDR.Addr().Is6()) {
		e.Add("gateway_ip", "Gateway IP must be within CIDR range.")
	}
	for _, d := range s.DNSServers {
		if !d.IsValid() || d.Zone() != "" {
			e.Add("dns_servers", "%q is not an IP address.", d.String())
		}
	}
	if _, ok := n.VLAN(s.VLANID); !ok {
		e.Add("vlan", "VLAN %d does not exist.", s.VLANID)
	}
	for _, o := range n.Subnets {
		if o.ID != s.ID && o.CIDR.IsValid() && o.CIDR.Overlaps(s.CIDR) {
			e.Add("cidr", "Subnet %s would overlap with existing subnets.", s.CIDR)
		}
	}
	return e
}

// ValidateRange checks an IP range: a known type, Start..End in order and
// inside the subnet, clear of the subnet's other ranges.
func ValidateRange(n *Network, r IPRange) FieldErrors {
	var e FieldErrors
	if r.Type != RangeDynamic && r.Type != RangeReserved {
		e.Add("type", "%s", invalidChoice("type", string(r.Type), []string{string(RangeDynamic), string(RangeReserved)}))
	}
	s, ok := n.Subnet(r.SubnetID)
	if !ok {
		e.Add("subnet", "Subnet %d does not exist.", r.SubnetID)
		return e
	}
	// MAAS's words, by which end is out.
	switch in1, in2 := s.CIDR.Contains(r.Start), s.CIDR.Contains(r.End); {
	case !in1 && !in2:
		e.Add("start_ip", "IP addresses must be within subnet: %s.", s.CIDR)
	case !in1:
		e.Add("start_ip", "Start IP address must be within subnet: %s.", s.CIDR)
	case !in2:
		e.Add("end_ip", "End IP address must be within subnet: %s.", s.CIDR)
	}
	if len(e) > 0 {
		return e
	}
	if r.End.Less(r.Start) {
		e.Add("end_ip", "End IP address must not be less than Start IP address.")
		return e
	}
	for _, o := range n.RangesOf(s.ID) {
		if o.ID != r.ID && o.Start.Compare(r.End) <= 0 && r.Start.Compare(o.End) <= 0 {
			what := "IP address or range"
			if r.Type == RangeReserved {
				what = "range"
			}
			e.Add("__all__", "Requested %s range conflicts with an existing %s.", r.Type, what)
		}
	}
	return e
}

// hostBounds are the lowest and highest addresses of the subnet a host may
// hold: an IPv4 subnet's network and broadcast addresses are not hosts'
// (except on /31 and /32, RFC 3021), nor is an IPv6 subnet's first, the
// subnet-router anycast address.
func hostBounds(p netip.Prefix) (lo, hi netip.Addr) {
	lo = p.Masked().Addr()
	hi = lastAddr(p)
	if p.Addr().Is4() && p.Bits() <= 30 {
		return lo.Next(), hi.Prev()
	}
	if p.Addr().Is6() && p.Bits() <= 126 {
		return lo.Next(), hi
	}
	return lo, hi
}

// lastAddr is the highest address in p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
