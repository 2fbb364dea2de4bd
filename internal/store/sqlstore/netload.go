package sqlstore

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Store) LoadNetwork(ctx context.Context) (*network.Network, error) {
	var n *network.Network
	err := s.inReadTx(ctx, func(c conn) error {
		var err error
		n, err = loadNetwork(ctx, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load network: %w", err)
	}
	return n, nil
}

func (s *Store) MachineNetwork(ctx context.Context, systemID string) (*network.Network, *network.Machine, error) {
	var n *network.Network
	var is []store.Interface
	err := s.inReadTx(ctx, func(c conn) error {
		var err error
		if n, err = loadNetwork(ctx, c); err != nil {
			return err
		}
		is, err = listInterfaces(ctx, c, systemID)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load network of %s: %w", systemID, err)
	}
	return n, MachineOf(is), nil
}

// loadNetwork reads every network object into the pure model's types.
func loadNetwork(ctx context.Context, c conn) (*network.Network, error) {
	n := &network.Network{}
	fabrics, err := listFabrics(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, f := range fabrics {
		n.Fabrics = append(n.Fabrics, network.Fabric{ID: int(f.ID), Name: f.Name, ClassType: f.ClassType})
	}
	spaces, err := listSpaces(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, sp := range spaces {
		n.Spaces = append(n.Spaces, network.Space{ID: int(sp.ID), Name: sp.Name})
	}
	vlans, err := listVLANs(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, v := range vlans {
		n.VLANs = append(n.VLANs, NetworkVLAN(v))
	}
	subnets, err := listSubnets(ctx, c)
	if err != nil {
		return nil, err
	}
	cidrs := map[int64]netip.Prefix{}
	for _, sn := range subnets {
		ns := NetworkSubnet(sn)
		cidrs[sn.ID] = ns.CIDR
		n.Subnets = append(n.Subnets, ns)
	}
	ranges, err := listRanges(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		n.Ranges = append(n.Ranges, NetworkRange(r))
	}
	routes, err := listRoutes(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		gw, _ := netip.ParseAddr(r.GatewayIP)
		n.Routes = append(n.Routes, network.StaticRoute{ID: int(r.ID), SourceID: int(r.SourceID), Destination: cidrs[r.DestinationID],
			Gateway: gw, Metric: r.Metric})
	}
	return n, nil
}

// NetworkVLAN is v in the pure model's terms.
func NetworkVLAN(v store.VLAN) network.VLAN {
	return network.VLAN{ID: int(v.ID), FabricID: int(v.FabricID), VID: v.VID, Name: v.Name, MTU: v.MTU, DHCPOn: v.DHCPOn,
		RelayVLAN: int(v.RelayVLANID), SpaceID: int(v.SpaceID)}
}

// NetworkSubnet is sn in the pure model's terms; unparsable addresses
// (which the API never stores) read as none.
func NetworkSubnet(sn store.Subnet) network.Subnet {
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
func NetworkRange(r store.IPRange) network.IPRange {
	out := network.IPRange{ID: int(r.ID), SubnetID: int(r.SubnetID), Type: network.IPRangeType(r.Type), Owner: r.Owner, Comment: r.Comment}
	out.Start, _ = netip.ParseAddr(r.Start)
	out.End, _ = netip.ParseAddr(r.End)
	return out
}

// MachineOf is a node's interfaces in the pure model's terms. The boot
// interface is the physical one marked boot.
func MachineOf(is []store.Interface) *network.Machine {
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

// LinkOf is an ip_addresses row as an interface's link: AUTO, STATIC
// (MAAS's STICKY and USER_RESERVED), DHCP, or LINK_UP (STICKY with no
// address and no subnet... or a subnet and no address).
func LinkOf(a store.IPAddress) network.Link {
	l := network.Link{ID: int(a.ID), SubnetID: int(a.SubnetID)}
	l.IP, _ = netip.ParseAddr(a.IP)
	switch {
	case a.AllocType == store.AllocAuto:
		l.Mode = network.LinkAuto
	case a.AllocType == store.AllocDHCP:
		l.Mode = network.LinkDHCP
	case a.AllocType == store.AllocSticky && a.IP == "":
		l.Mode = network.LinkUp
	default:
		l.Mode = network.LinkStatic
	}
	return l
}
