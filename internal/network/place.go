package network

import (
	"net"
	"net/netip"
)

// Placement is where commissioning puts one physical interface: on the
// VLAN of the subnet the rack saw it on, or, seen on no known subnet, on
// the untagged VLAN of a fabric of its own (NewFabric), as MAAS does with
// a segment it does not know. DHCPSubnet, when not 0, is a DHCP link to
// add there: the boot interface's, as MAAS gives it.
type Placement struct {
	InterfaceID int
	VLANID      int
	NewFabric   bool
	DHCPSubnet  int
}

// Place decides where commissioning puts the machine's physical
// interfaces, given the address the rack last saw each MAC with (seen,
// keyed by normalised MAC). Only interfaces not yet on a VLAN and not a
// member of a bond, bridge or VLAN are placed: recommissioning leaves
// what the operator built, and interfaces placed before, alone.
func Place(n *Network, m *Machine, seen map[string]netip.Addr) []Placement {
	var out []Placement
	for _, i := range m.Interfaces {
		if i.Type != Physical || i.VLANID != 0 || len(m.Children(i.ID, -1)) > 0 {
			continue
		}
		p := Placement{InterfaceID: i.ID, NewFabric: true}
		if s, ok := subnetHolding(n, seen[normMAC(i.MAC)]); ok {
			p.VLANID, p.NewFabric = s.VLANID, false
			if i.ID == m.BootInterface && len(i.Links) == 0 {
				p.DHCPSubnet = s.ID
			}
		}
		out = append(out, p)
	}
	return out
}

// subnetHolding is the most specific subnet containing a.
func subnetHolding(n *Network, a netip.Addr) (Subnet, bool) {
	var best Subnet
	found := false
	if !a.IsValid() {
		return best, false
	}
	a = a.Unmap()
	for _, s := range n.Subnets {
		if s.CIDR.Contains(a) && (!found || s.CIDR.Bits() > best.CIDR.Bits()) {
			best, found = s, true
		}
	}
	return best, found
}

func normMAC(s string) string {
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String()
	}
	return s
}
