// Package dhcpshare decides how two racks share the DHCP of one VLAN, as
// MAAS's primary_rack and secondary_rack: which rack answers, which part
// of each dynamic range each one may hand out, and the rules for setting
// the two racks. It is pure: the region applies the decision when it
// streams a rack its subnets, and the racks' DHCP servers enforce it.
//
// MAAS runs ISC dhcpd's failover protocol between the two racks, which
// hands each server a pool balance over the wire. Anvil splits every
// dynamic range in two fixed, disjoint halves instead, computed the same
// way by the region for both racks: no address can be handed out by both,
// whether or not the racks, or the region, can talk to each other. Leases
// cross over through the region (the racks report theirs, and each is
// streamed its partner's), which is what lets the survivor confirm the
// addresses its dead partner handed out.
package dhcpshare

import "net/netip"

// Role is what a rack is for one VLAN's DHCP.
type Role int

const (
	// Any: the VLAN names no primary rack, so every rack serving the
	// subnet serves all of it (a single-rack site needs nothing set).
	Any Role = iota
	// Primary is the VLAN's primary rack.
	Primary
	// Secondary is the VLAN's secondary rack.
	Secondary
	// Bystander: the VLAN names a primary and this rack is neither it nor
	// the secondary. It does not answer for the VLAN's subnets, as MAAS
	// runs no DHCP for a VLAN on other racks: even a fixed lease from it
	// would send the machine to boot from a rack the operator did not
	// choose.
	Bystander
)

func (r Role) String() string {
	return [...]string{"any", "primary", "secondary", "bystander"}[r]
}

// Racks are a VLAN's rack fields: system ids, "" for none.
type Racks struct {
	Primary, Secondary string
}

// RoleOf is rack's role for a VLAN with racks v. A secondary without a
// primary (which SetRacks refuses; rows from before it may hold one)
// counts for nothing.
func RoleOf(v Racks, rack string) Role {
	switch {
	case v.Primary == "":
		return Any
	case rack == v.Primary:
		return Primary
	case v.Secondary != "" && rack == v.Secondary:
		return Secondary
	}
	return Bystander
}

// Range is an inclusive range of IPv4 addresses.
type Range struct {
	Start, End netip.Addr
}

// Share is what one rack serves of a subnet.
type Share struct {
	// Serve says whether the rack answers for the subnet at all.
	Serve bool
	// Own are the dynamic addresses the rack may hand out.
	Own []Range
	// Peer are its partner's: it never offers one, and confirms one only
	// to the client its partner leased it to.
	Peer []Range
}

// ShareOf is rack's share of a subnet with dynamic ranges on a VLAN with
// racks v. Primary and secondary split each range with Split (the primary
// takes the lower half); a primary alone keeps all of it.
func ShareOf(v Racks, rack string, dynamic []Range) Share {
	role := RoleOf(v, rack)
	if role == Bystander {
		return Share{}
	}
	if role == Any || v.Secondary == "" {
		return Share{Serve: true, Own: dynamic}
	}
	s := Share{Serve: true}
	for _, r := range dynamic {
		lo, hi, ok := Split(r)
		own, peer := []Range{lo}, []Range(nil)
		if ok {
			peer = []Range{hi}
		}
		if role == Secondary {
			own, peer = peer, own
		}
		s.Own, s.Peer = append(s.Own, own...), append(s.Peer, peer...)
	}
	return s
}

// Split halves an IPv4 range: the lower half, with the middle address
// when the count is odd, and the upper half; ok is false when the range
// holds one address (it is all lower half). A range that is not IPv4 or
// is upside down is returned whole as the lower half.
func Split(r Range) (lo, hi Range, ok bool) {
	if !r.Start.Is4() || !r.End.Is4() || r.End.Less(r.Start) || r.Start == r.End {
		return r, Range{}, false
	}
	a, b := u32(r.Start), u32(r.End)
	mid := a + (b-a)/2 // last address of the lower half
	return Range{r.Start, addr(mid)}, Range{addr(mid + 1), r.End}, true
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func addr(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
