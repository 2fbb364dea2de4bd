package ui

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// netNames is the site's fabrics, VLANs, spaces and subnets by id, read
// once for a page, to name what interfaces and subnets refer to.
type netNames struct {
	Fabrics []store.Fabric
	VLANs   []store.VLAN
	Spaces  []store.Space
	Subnets []store.Subnet
	fabric  map[int64]store.Fabric
	vlan    map[int64]store.VLAN
	space   map[int64]store.Space
	subnet  map[int64]store.Subnet
}

func (s *Server) netNames(ctx context.Context) (*netNames, error) {
	n := &netNames{fabric: map[int64]store.Fabric{}, vlan: map[int64]store.VLAN{}, space: map[int64]store.Space{}, subnet: map[int64]store.Subnet{}}
	var err error
	if n.Fabrics, err = s.store.ListFabrics(ctx); err != nil {
		return nil, fmt.Errorf("fabrics: %w", err)
	}
	if n.VLANs, err = s.store.ListVLANs(ctx); err != nil {
		return nil, fmt.Errorf("vlans: %w", err)
	}
	if n.Spaces, err = s.store.ListSpaces(ctx); err != nil {
		return nil, fmt.Errorf("spaces: %w", err)
	}
	if n.Subnets, err = s.store.ListSubnets(ctx); err != nil {
		return nil, fmt.Errorf("subnets: %w", err)
	}
	for _, f := range n.Fabrics {
		n.fabric[f.ID] = f
	}
	for _, v := range n.VLANs {
		n.vlan[v.ID] = v
	}
	for _, sp := range n.Spaces {
		n.space[sp.ID] = sp
	}
	for _, sn := range n.Subnets {
		n.subnet[sn.ID] = sn
	}
	return n, nil
}

// VLANName is a VLAN as people name it: "fabric-0.untagged", "fabric-1.42".
func (n *netNames) VLANName(id int64) string {
	v, ok := n.vlan[id]
	if !ok {
		return "—"
	}
	f := cmp.Or(n.fabric[v.FabricID].Name, fmt.Sprintf("fabric %d", v.FabricID))
	if v.VID == 0 {
		return f + ".untagged"
	}
	return fmt.Sprintf("%s.%d", f, v.VID)
}

// SpaceName is MAAS's name of a VLAN's space: "undefined" for none.
func (n *netNames) SpaceName(vlanID int64) string {
	if sp, ok := n.space[n.vlan[vlanID].SpaceID]; ok {
		return sp.Name
	}
	return "undefined"
}

// SubnetCIDR names a subnet by its CIDR.
func (n *netNames) SubnetCIDR(id int64) string {
	if sn, ok := n.subnet[id]; ok {
		return sn.CIDR
	}
	return "—"
}

// TaggedVLANs are the VLANs a VLAN interface may sit on.
func (n *netNames) TaggedVLANs() []store.VLAN {
	var out []store.VLAN
	for _, v := range n.VLANs {
		if v.VID != 0 {
			out = append(out, v)
		}
	}
	return out
}

// subnetRow is a subnet on the network page with its utilisation.
type subnetRow struct {
	store.Subnet
	VLAN, Space     string
	Used, Total     string
	Percent         int
	Dynamic, Static int
}

// fabricRow is a fabric with its VLANs.
type fabricRow struct {
	store.Fabric
	VLANs []store.VLAN
}

type networkData struct {
	*netNames
	FabricRows []fabricRow
	SubnetRows []subnetRow
	// SpaceVLANs counts each space's VLANs, by space id.
	SpaceVLANs map[int64]int
}

// networkPage lists fabrics, VLANs, spaces and subnets with how much of
// each subnet is taken, computed as the subnets' statistics op does.
func (s *Server) networkPage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	ctx := r.Context()
	names, err := s.netNames(ctx)
	if err != nil {
		return "", err
	}
	model, err := s.store.LoadNetwork(ctx)
	if err != nil {
		return "", fmt.Errorf("network model: %w", err)
	}
	addrs, err := s.store.ListIPAddresses(ctx, store.IPAddressFilter{})
	if err != nil {
		return "", fmt.Errorf("ip addresses: %w", err)
	}
	assigned := map[int64][]netip.Addr{}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a.IP); err == nil {
			assigned[a.SubnetID] = append(assigned[a.SubnetID], ip)
		}
	}
	d := networkData{netNames: names, SpaceVLANs: map[int64]int{}}
	for _, f := range names.Fabrics {
		row := fabricRow{Fabric: f}
		for _, vl := range names.VLANs {
			if vl.FabricID == f.ID {
				row.VLANs = append(row.VLANs, vl)
			}
		}
		d.FabricRows = append(d.FabricRows, row)
	}
	for _, vl := range names.VLANs {
		if vl.SpaceID != 0 {
			d.SpaceVLANs[vl.SpaceID]++
		}
	}
	for _, sn := range names.Subnets {
		u := network.Use(model, store.NetworkSubnet(sn), assigned[sn.ID])
		d.SubnetRows = append(d.SubnetRows, subnetRow{Subnet: sn, VLAN: names.VLANName(sn.VLANID), Space: names.SpaceName(sn.VLANID),
			Used: u.Unavailable().String(), Total: u.Total.String(), Percent: int(u.Usage*100 + 0.5), Static: len(assigned[sn.ID])})
	}
	slices.SortFunc(d.SubnetRows, func(a, b subnetRow) int { return cmp.Compare(a.CIDR, b.CIDR) })
	v.Title, v.Nav, v.Data = "Network", "network", d
	return "network.html", nil
}

// ifaceRow is one of a machine's interfaces with what it is linked to.
type ifaceRow struct {
	store.Interface
	Parents []string
	VLAN    string
	Links   []linkRow
}

type linkRow struct {
	ID               int64
	Mode, Subnet, IP string
}

// machineNet is a machine page's network section.
type machineNet struct {
	Interfaces []ifaceRow
	Names      *netNames
	BondModes  []network.BondMode
}

func (s *Server) machineNet(ctx context.Context, systemID string) (machineNet, error) {
	is, err := s.store.ListInterfaces(ctx, systemID)
	if err != nil {
		return machineNet{}, fmt.Errorf("interfaces: %w", err)
	}
	names, err := s.netNames(ctx)
	if err != nil {
		return machineNet{}, err
	}
	byID := map[int64]string{}
	for _, i := range is {
		byID[i.ID] = i.Name
	}
	d := machineNet{Names: names, BondModes: network.BondModes}
	for _, i := range is {
		row := ifaceRow{Interface: i, VLAN: names.VLANName(i.VLANID)}
		for _, p := range i.Parents {
			row.Parents = append(row.Parents, byID[p])
		}
		for _, l := range i.Links {
			row.Links = append(row.Links, linkRow{ID: l.ID, Mode: string(store.LinkOf(l).Mode), Subnet: names.SubnetCIDR(l.SubnetID), IP: l.IP})
		}
		d.Interfaces = append(d.Interfaces, row)
	}
	return d, nil
}
