package network

import (
	"fmt"
	"net/netip"
)

// Used says whether an address is held by something other than the
// machine being checked (another machine, a device, the rack); the store
// answers it.
type Used func(netip.Addr) bool

// ValidateLink checks one link of an interface: its mode, its subnet (on
// the interface's VLAN), and for a STATIC or allocated AUTO link its
// address: inside the subnet, a host address, not the gateway, outside the
// dynamic ranges, not used by another.
func ValidateLink(n *Network, i Interface, l Link, used Used) FieldErrors {
	var e FieldErrors
	switch l.Mode {
	case LinkAuto, LinkStatic, LinkDHCP, LinkUp:
	default:
		e.Add("mode", "%s", invalidChoice("mode", string(l.Mode), []string{"AUTO", "DHCP", "STATIC", "LINK_UP"}))
		return e
	}
	if l.SubnetID == 0 {
		if l.Mode == LinkAuto || l.Mode == LinkStatic {
			e.Add("subnet", "This field is required.")
		}
		if l.IP.IsValid() {
			e.Add("ip_address", "An address needs a subnet.")
		}
		return e
	}
	s, ok := n.Subnet(l.SubnetID)
	if !ok {
		e.Add("subnet", "Subnet %d does not exist.", l.SubnetID)
		return e
	}
	if s.VLANID != i.VLANID {
		e.Add("subnet", "Subnet %s is not on the VLAN of %s.", s.CIDR, i.Name)
	}
	if !l.IP.IsValid() {
		return e
	}
	if l.Mode != LinkStatic && l.Mode != LinkAuto {
		e.Add("ip_address", "An address is only given in STATIC mode.")
		return e
	}
	e.Merge("", checkAddress(n, s, l.IP, used))
	return e
}

// checkAddress is the STATIC address rule, in MAAS's words where MAAS has
// them.
func checkAddress(n *Network, s Subnet, ip netip.Addr, used Used) FieldErrors {
	var e FieldErrors
	if !s.CIDR.Contains(ip) {
		e.Add("ip_address", "IP address is not in the given subnet '%s'.", s.CIDR)
		return e
	}
	if lo, hi := hostBounds(s.CIDR); ip.Less(lo) || hi.Less(ip) {
		e.Add("ip_address", "IP address %s is the network or broadcast address of %s.", ip, s.CIDR)
	}
	if ip == s.Gateway {
		e.Add("ip_address", "IP address %s is the gateway of %s.", ip, s.CIDR)
	}
	for _, r := range n.RangesOf(s.ID) {
		if r.Type == RangeDynamic && r.Contains(ip) {
			e.Add("ip_address", "IP address is inside a dynamic range %s-%s.", r.Start, r.End)
		}
	}
	if used != nil && used(ip) {
		e.Add("ip_address", "IP address is already in use.")
	}
	return e
}

// validateLinks checks each link and how they go together on one
// interface: one DHCP link at most, and LINK_UP alone.
func validateLinks(n *Network, i Interface, used Used) FieldErrors {
	var e FieldErrors
	dhcp := 0
	for k, l := range i.Links {
		e.Merge(fmt.Sprintf("links.%d", k), ValidateLink(n, i, l, used))
		switch l.Mode {
		case LinkDHCP:
			if dhcp++; dhcp > 1 {
				e.Add(fmt.Sprintf("links.%d.mode", k), "Interface is already set to DHCP.")
			}
		case LinkUp:
			if len(i.Links) > 1 {
				e.Add(fmt.Sprintf("links.%d.mode", k), "Cannot configure interface to link up (with no IP address) while other links are already configured.")
			}
		}
	}
	return e
}
