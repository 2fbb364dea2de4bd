package network

import (
	"cmp"
	"net/netip"
	"slices"
)

// Gateway is a default gateway: the router and the link whose subnet
// provides it (the interface that carries the default route).
type Gateway struct {
	InterfaceID int
	LinkID      int
	SubnetID    int
	Router      netip.Addr
}

// Gateways are the machine's default gateways, one per family; a zero
// Router means the family has none.
type Gateways struct {
	IPv4, IPv6 Gateway
}

// DefaultGateways chooses the machine's gateway per family: the link the
// owner chose when it can serve, else MAAS's best guess among the AUTO and
// STATIC links on subnets with a gateway, preferring in order a VLAN with
// DHCP on (managed), a bond or bridge, the boot interface, another physical
// one, a VLAN interface; then STATIC over AUTO; then the lowest interface
// ID, then the lowest link ID.
func DefaultGateways(n *Network, m *Machine) Gateways {
	var cands []candidate
	for _, i := range m.Interfaces {
		if !i.Enabled {
			continue
		}
		for _, l := range i.Links {
			if g, ok := gatewayOf(n, i, l); ok {
				cands = append(cands, candidate{g, rankOf(n, m, i, l)})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return a.rank.compare(b.rank) })
	var out Gateways
	for _, fam := range []struct {
		dst    *Gateway
		chosen int
		v4     bool
	}{{&out.IPv4, m.GatewayLink4, true}, {&out.IPv6, m.GatewayLink6, false}} {
		for _, c := range cands {
			if c.g.Router.Is4() == fam.v4 && c.g.LinkID == fam.chosen && fam.chosen != 0 {
				*fam.dst = c.g
			}
		}
		if fam.dst.Router.IsValid() {
			continue
		}
		for _, c := range cands {
			if c.g.Router.Is4() == fam.v4 {
				*fam.dst = c.g
				break
			}
		}
	}
	return out
}

// gatewayOf is the gateway a link could give: AUTO or STATIC, on a subnet
// with a gateway.
func gatewayOf(n *Network, i Interface, l Link) (Gateway, bool) {
	if l.Mode != LinkAuto && l.Mode != LinkStatic {
		return Gateway{}, false
	}
	s, ok := n.Subnet(l.SubnetID)
	if !ok || !s.Gateway.IsValid() {
		return Gateway{}, false
	}
	return Gateway{InterfaceID: i.ID, LinkID: l.ID, SubnetID: s.ID, Router: s.Gateway}, true
}

type candidate struct {
	g    Gateway
	rank rank
}

type rank struct {
	unmanaged, kind, mode, iface, link int
}

func (a rank) compare(b rank) int {
	return cmp.Or(cmp.Compare(a.unmanaged, b.unmanaged), cmp.Compare(a.kind, b.kind),
		cmp.Compare(a.mode, b.mode), cmp.Compare(a.iface, b.iface), cmp.Compare(a.link, b.link))
}

func rankOf(n *Network, m *Machine, i Interface, l Link) rank {
	r := rank{unmanaged: 1, mode: 2, iface: i.ID, link: l.ID}
	if v, ok := n.VLAN(i.VLANID); ok && v.DHCPOn {
		r.unmanaged = 0
	}
	switch {
	case i.Type == Bond || i.Type == Bridge:
		r.kind = 1
	case i.Type == Physical && i.ID == m.BootInterface:
		r.kind = 2
	case i.Type == Physical:
		r.kind = 3
	default:
		r.kind = 4
	}
	if l.Mode == LinkStatic {
		r.mode = 1
	}
	return r
}

// validateGateways checks the owner's gateway choices: a link of the
// machine, AUTO or STATIC, on a subnet of the family with a gateway.
func validateGateways(n *Network, m *Machine) FieldErrors {
	var e FieldErrors
	for _, fam := range []struct {
		field string
		link  int
		v4    bool
	}{{"gateway_link_ipv4", m.GatewayLink4, true}, {"gateway_link_ipv6", m.GatewayLink6, false}} {
		if fam.link == 0 {
			continue
		}
		i, l, ok := m.link(fam.link)
		if !ok {
			e.Add(fam.field, "Link %d is not a link of this machine.", fam.link)
			continue
		}
		if l.Mode != LinkAuto && l.Mode != LinkStatic {
			e.Add(fam.field, "Cannot use in mode '%s'.", modeName(l.Mode))
			continue
		}
		g, ok := gatewayOf(n, i, l)
		if !ok {
			s, _ := n.Subnet(l.SubnetID)
			e.Add(fam.field, "Cannot set as default gateway because subnet %s doesn't provide a gateway IP address.", s.CIDR)
			continue
		}
		if g.Router.Is4() != fam.v4 {
			e.Add(fam.field, "The gateway of subnet %d is not of this address family.", l.SubnetID)
		}
	}
	return e
}

func (m *Machine) link(id int) (Interface, Link, bool) {
	for _, i := range m.Interfaces {
		for _, l := range i.Links {
			if l.ID == id {
				return i, l, true
			}
		}
	}
	return Interface{}, Link{}, false
}

// modeName is a link mode as MAAS's API spells it.
func modeName(m LinkMode) string {
	switch m {
	case LinkAuto:
		return "AUTO"
	case LinkStatic:
		return "STATIC"
	case LinkDHCP:
		return "DHCP"
	case LinkUp:
		return "LINK_UP"
	}
	return string(m)
}
