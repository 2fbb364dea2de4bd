package store

import (
	"net/netip"

	"github.com/anvilmetal/anvil/internal/network"
)

// The stored network objects in the pure model's terms.

// NetworkVLAN is v in the pure model's terms.
func NetworkVLAN(v VLAN) network.VLAN {
	return network.VLAN{ID: int(v.ID), FabricID: int(v.FabricID), VID: v.VID, Name: v.Name, MTU: v.MTU, DHCPOn: v.DHCPOn,
		RelayVLAN: int(v.RelayVLANID), SpaceID: int(v.SpaceID)}
}

// NetworkSubnet is sn in the pure model's terms; unparsable addresses
// (which the API never stores) read as none.
func NetworkSubnet(sn Subnet) network.Subnet {
	out := network.Subnet{ID: int(sn.ID), VLANID: int(sn.VLANID), Name: sn.Name, Managed: sn.Managed, AllowDNS: sn.AllowDNS}
	out.CIDR, _ = netip.ParsePrefix(sn.CIDR)
	out.Gateway, _ = netip.ParseAddr(sn.Gateway)
	for _, d := range sn.DNSServers {
		if a, err := netip.ParseAddr(d); err == nil {
			out.DNSServers = append(out.DNSServers, a)
		}
	}
	return out
}

// NetworkRange is r in the pure model's terms.
func NetworkRange(r IPRange) network.IPRange {
	out := network.IPRange{ID: int(r.ID), SubnetID: int(r.SubnetID), Type: network.IPRangeType(r.Type), Owner: r.Owner, Comment: r.Comment}
	out.Start, _ = netip.ParseAddr(r.Start)
	out.End, _ = netip.ParseAddr(r.End)
	return out
}

// MachineOf is a node's interfaces in the pure model's terms. The boot
// interface is the physical one marked boot.
func MachineOf(is []Interface) *network.Machine {
	m := &network.Machine{}
	for _, i := range is {
		ni := network.Interface{ID: int(i.ID), Name: i.Name, Type: network.InterfaceType(i.Type), MAC: i.MAC, VLANID: int(i.VLANID),
			MTU: i.Params.MTU, Enabled: i.Enabled, Tags: i.Tags}
		for _, p := range i.Parents {
			ni.Parents = append(ni.Parents, int(p))
		}
		ni.Bond = network.BondParams{Mode: network.BondMode(i.Params.BondMode), MIIMon: i.Params.BondMIIMon, UpDelay: i.Params.BondUpDelay,
			DownDelay: i.Params.BondDownDelay, LACPRate: i.Params.BondLACPRate, XmitHashPolicy: i.Params.BondXmitHashPolicy}
		ni.Bridge = network.BridgeParams{Type: network.BridgeType(i.Params.BridgeType), STP: i.Params.BridgeSTP, ForwardDelay: i.Params.BridgeFD}
		for _, l := range i.Links {
			ni.Links = append(ni.Links, LinkOf(l))
		}
		if i.Boot {
			m.BootInterface = ni.ID
		}
		m.Interfaces = append(m.Interfaces, ni)
	}
	return m
}

// LinkOf is an ip_addresses row as an interface's link: AUTO, DHCP,
// LINK_UP (MAAS's STICKY with no address, on a subnet or none) or STATIC
// (STICKY or USER_RESERVED with an address).
func LinkOf(a IPAddress) network.Link {
	l := network.Link{ID: int(a.ID), SubnetID: int(a.SubnetID)}
	l.IP, _ = netip.ParseAddr(a.IP)
	switch {
	case a.AllocType == AllocAuto:
		l.Mode = network.LinkAuto
	case a.AllocType == AllocDHCP:
		l.Mode = network.LinkDHCP
	case a.AllocType == AllocSticky && a.IP == "":
		l.Mode = network.LinkUp
	default:
		l.Mode = network.LinkStatic
	}
	return l
}
