package dnszone

import (
	"cmp"
	"net/netip"
	"slices"
)

// Iface is a machine's interface as the choice of its DNS addresses sees
// it: its type ("physical", "bond", "bridge", "vlan"), its parents' IDs,
// and whether it is the NIC the machine boots from.
type Iface struct {
	ID      int64
	Name    string
	Type    string
	Parents []int64
	Boot    bool
}

// Kinds of address, in MAAS's order of preference for a machine's name.
const (
	Sticky       = 1 // STATIC
	UserReserved = 2
	Auto         = 3
	DHCP         = 4
	Discovered   = 5 // what a rack saw a DHCP interface take
)

// Candidate is one of a machine's addresses, on the interface with ID
// Iface, of the given kind.
type Candidate struct {
	Iface int64
	Kind  int
	IP    netip.Addr
}

// HostAddrs chooses a machine's DNS addresses as MAAS does. The name
// itself gets one address per family: from the boot interfaces (the boot
// NIC, and the bonds, bridges and VLANs built on it) when they have one,
// preferring a bridge, then a bond, over the NIC it took over, then
// sticky addresses over AUTO, DHCP and discovered ones. Every other
// address names its interface (iface.host), except that discovered
// addresses are left out once the machine has any assigned one: an old
// sighting of a NIC a bond took over must not outlive its use.
func HostAddrs(ifaces []Iface, cands []Candidate) []HostAddr {
	byID := map[int64]Iface{}
	for _, i := range ifaces {
		byID[i.ID] = i
	}
	bootID := int64(-1)
	for _, i := range ifaces {
		if i.Boot {
			bootID = i.ID
		}
	}
	parentIs := func(i Iface, id int64, depth int) bool {
		for _, p := range i.Parents {
			if depth == 1 && p == id {
				return true
			}
			if depth == 2 && slices.Contains(byID[p].Parents, id) {
				return true
			}
		}
		return false
	}
	isBoot := func(i Iface) bool {
		return i.ID == bootID || parentIs(i, bootID, 1) || parentIs(i, bootID, 2)
	}
	pref := func(i Iface) int {
		switch {
		case i.Type == "bridge" && parentIs(i, bootID, 2):
			return 1
		case i.Type == "bridge" && parentIs(i, bootID, 1):
			return 2
		case i.Type == "bond" && parentIs(i, bootID, 1):
			return 3
		case i.Type == "physical" && i.ID == bootID:
			return 4
		case i.Type == "bond":
			return 5
		case i.Type == "physical":
			return 6
		case i.Type == "vlan":
			return 7
		}
		return 10
	}
	assigned := slices.ContainsFunc(cands, func(c Candidate) bool { return c.Kind != Discovered })
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b Candidate) int {
		ia, ib := byID[a.Iface], byID[b.Iface]
		return cmp.Or(-cmpBool(isBoot(ia), isBoot(ib)), cmp.Compare(pref(ia), pref(ib)), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Iface, b.Iface), a.IP.Compare(b.IP))
	})
	var out []HostAddr
	main := map[bool]bool{} // by family (IPv4): the name has its address
	bootSeen := false
	for _, c := range order {
		i := byID[c.Iface]
		b := isBoot(i)
		if !main[c.IP.Is4()] && (b || !bootSeen) {
			main[c.IP.Is4()] = true
			bootSeen = bootSeen || b
			out = append(out, HostAddr{Iface: i.Name, Boot: true, IP: c.IP})
			continue
		}
		if c.Kind == Discovered && assigned {
			continue
		}
		out = append(out, HostAddr{Iface: i.Name, IP: c.IP})
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
