package network

import "net/netip"

// Fabric is a set of VLANs that can reach each other at layer 2.
type Fabric struct {
	ID        int
	Name      string
	ClassType string
}

// Space is a named set of subnets that share a purpose, across fabrics.
type Space struct {
	ID   int
	Name string
}

// VLAN is a VLAN on a fabric. VID 0 is the fabric's untagged VLAN.
type VLAN struct {
	ID       int
	FabricID int
	VID      int
	Name     string
	MTU      int // 0 means DefaultMTU
	DHCPOn   bool
	// RelayVLAN is the ID of the VLAN whose DHCP server answers this one
	// (through a relay), 0 for none.
	RelayVLAN int
	SpaceID   int // 0 for none
}

// DefaultMTU is a VLAN's MTU when none is set, as MAAS's default.
const DefaultMTU = 1500

// Effective MTU of the VLAN: its own, or DefaultMTU.
func (v VLAN) EffectiveMTU() int {
	if v.MTU == 0 {
		return DefaultMTU
	}
	return v.MTU
}

// Subnet is an IP network on a VLAN.
type Subnet struct {
	ID         int
	VLANID     int
	Name       string
	CIDR       netip.Prefix
	Gateway    netip.Addr // zero for none
	DNSServers []netip.Addr
	Managed    bool
	AllowDNS   bool
}

// IPRangeType says what a range of a subnet is for.
type IPRangeType string

const (
	RangeDynamic  IPRangeType = "dynamic"  // handed out by DHCP
	RangeReserved IPRangeType = "reserved" // kept out of MAAS's hands
)

// IPRange is a range of addresses of a subnet, Start..End inclusive.
type IPRange struct {
	ID       int
	SubnetID int
	Type     IPRangeType
	Start    netip.Addr
	End      netip.Addr
	Owner    string
	Comment  string
}

// Contains reports whether a lies in the range.
func (r IPRange) Contains(a netip.Addr) bool {
	return a.BitLen() == r.Start.BitLen() && r.Start.Compare(a) <= 0 && a.Compare(r.End) <= 0
}

// StaticRoute sends traffic for Destination via Gateway from machines
// linked to the Source subnet.
type StaticRoute struct {
	ID          int
	SourceID    int // the source subnet
	Destination netip.Prefix
	Gateway     netip.Addr
	Metric      int
}

// Network is the site's network objects a machine's interfaces refer to.
type Network struct {
	Fabrics []Fabric
	VLANs   []VLAN
	Spaces  []Space
	Subnets []Subnet
	Ranges  []IPRange
	Routes  []StaticRoute
}

// VLAN returns the VLAN with the given ID.
func (n *Network) VLAN(id int) (VLAN, bool) {
	for _, v := range n.VLANs {
		if v.ID == id {
			return v, true
		}
	}
	return VLAN{}, false
}

// Subnet returns the subnet with the given ID.
func (n *Network) Subnet(id int) (Subnet, bool) {
	for _, s := range n.Subnets {
		if s.ID == id {
			return s, true
		}
	}
	return Subnet{}, false
}

// RangesOf returns the subnet's ranges.
func (n *Network) RangesOf(subnetID int) []IPRange {
	var out []IPRange
	for _, r := range n.Ranges {
		if r.SubnetID == subnetID {
			out = append(out, r)
		}
	}
	return out
}
