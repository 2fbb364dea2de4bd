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
	return n, store.MachineOf(is), nil
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
		n.VLANs = append(n.VLANs, store.NetworkVLAN(v))
	}
	subnets, err := listSubnets(ctx, c)
	if err != nil {
		return nil, err
	}
	cidrs := map[int64]netip.Prefix{}
	for _, sn := range subnets {
		ns := store.NetworkSubnet(sn)
		cidrs[sn.ID] = ns.CIDR
		n.Subnets = append(n.Subnets, ns)
	}
	ranges, err := listRanges(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		n.Ranges = append(n.Ranges, store.NetworkRange(r))
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
