package api

import (
	"context"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/network"
)

// ifaceView is what rendering a machine's interfaces reads: the pure
// model (effective MTUs, gateways) and the site's stored objects (their
// JSON carries more than the model keeps).
type ifaceView struct {
	n *network.Network
	v *netView
}

func (s *Server) loadIfaceView(ctx context.Context, n *network.Network) (ifaceView, error) {
	v, err := s.netView(ctx)
	if err != nil {
		return ifaceView{}, err
	}
	return ifaceView{n: n, v: v}, nil
}

// vlan renders the VLAN with the given ID, nil (null) for none: a
// disconnected interface.
func (v ifaceView) vlan(id int) *vlanJSON {
	if _, ok := v.n.VLAN(id); !ok {
		return nil
	}
	j := v.v.renderVLAN(v.v.vlan(int64(id)))
	return &j
}

// linkJSON is one of an interface's links as MAAS's get_links gives it:
// ip_address only once there is one, subnet only when the link has one.
type linkJSON struct {
	ID        int64       `json:"id"`
	Mode      string      `json:"mode"`
	IPAddress string      `json:"ip_address,omitempty"`
	Subnet    *subnetJSON `json:"subnet,omitempty"`
}

// renderNetIface renders an interface of the network model. nic is what
// commissioning saw of the NIC of the same MAC (its zero value if none).
func (v ifaceView) renderNetIface(systemID string, m *network.Machine, i network.Interface, nic *machine.NIC) ifaceJSON {
	j := ifaceJSON{
		ID: int64(i.ID), Name: i.Name, Type: string(i.Type), Enabled: i.Enabled, MACAddress: i.MAC,
		Tags: append([]string{}, i.Tags...), Links: []any{}, EffectiveMTU: network.EffectiveMTU(v.n, i),
		Parents: []string{}, Children: []string{}, LinkConnected: true, SystemID: systemID, Params: ifaceParams(i),
		ResourceURI: Prefix + "nodes/" + systemID + "/interfaces/" + itoa(int64(i.ID)) + "/",
	}
	if vl := v.vlan(i.VLANID); vl != nil {
		j.VLAN = vl
	}
	for _, p := range i.Parents {
		if pi, ok := m.Interface(p); ok {
			j.Parents = append(j.Parents, pi.Name)
		}
	}
	for _, c := range m.Children(i.ID, -1) {
		j.Children = append(j.Children, c.Name)
	}
	slices.Sort(j.Parents)
	slices.Sort(j.Children)
	for _, l := range i.Links {
		lj := linkJSON{ID: int64(l.ID), Mode: string(l.Mode)}
		if l.IP.IsValid() {
			lj.IPAddress = l.IP.String()
		}
		if _, ok := v.n.Subnet(l.SubnetID); ok && l.SubnetID != 0 {
			sj := v.v.renderSubnet(v.v.subnet(int64(l.SubnetID)))
			lj.Subnet = &sj
		}
		j.Links = append(j.Links, lj)
	}
	if nic != nil {
		j.LinkConnected, j.InterfaceSpeed, j.LinkSpeed = nic.Link, nic.SpeedMbps, nic.SpeedMbps
	}
	return j
}

// ifaceParams is MAAS's params field: "" for an interface without any,
// else the object of mtu, bond_* or bridge_* values it was given.
func ifaceParams(i network.Interface) any {
	p := map[string]any{}
	if i.MTU != 0 {
		p["mtu"] = i.MTU
	}
	switch i.Type {
	case network.Bond:
		b := i.Bond.Defaults()
		p["bond_mode"], p["bond_miimon"], p["bond_updelay"], p["bond_downdelay"] = string(b.Mode), b.MIIMon, b.UpDelay, b.DownDelay
		p["bond_lacp_rate"], p["bond_xmit_hash_policy"], p["bond_num_grat_arp"] = b.LACPRate, b.XmitHashPolicy, 1
	case network.Bridge:
		t := i.Bridge.Type
		if t == "" {
			t = network.BridgeStandard
		}
		p["bridge_type"], p["bridge_stp"], p["bridge_fd"] = string(t), i.Bridge.STP, i.Bridge.FD()
	}
	if len(p) == 0 {
		return ""
	}
	return p
}

// overlay lays the machine's network model on its JSON:
// interface_set, boot_interface, ip_addresses and default_gateways. A
// machine whose interfaces the model does not know yet keeps the plain
// rendering.
func (v ifaceView) overlay(j *machineJSON, mm *machine.Machine, m *network.Machine, gw4, gw6 int) {
	if len(m.Interfaces) == 0 {
		return
	}
	nics := map[string]*machine.NIC{}
	if inv := mm.Inventory; inv != nil {
		for k := range inv.NICs {
			nics[strings.ToLower(inv.NICs[k].MAC)] = &inv.NICs[k]
		}
	}
	j.Interfaces = j.Interfaces[:0]
	j.IPAddresses = []string{}
	j.BootInterface = nil
	for _, i := range m.Interfaces {
		ij := v.renderNetIface(mm.SystemID, m, i, nics[strings.ToLower(i.MAC)])
		j.Interfaces = append(j.Interfaces, ij)
		if i.ID == m.BootInterface {
			b := ij
			j.BootInterface = &b
		}
		for _, l := range i.Links {
			if l.IP.IsValid() {
				j.IPAddresses = append(j.IPAddresses, l.IP.String())
			}
		}
	}
	if j.BootInterface == nil && len(j.Interfaces) > 0 {
		b := j.Interfaces[0]
		j.BootInterface = &b
	}
	m.GatewayLink4, m.GatewayLink6 = gw4, gw6
	gws := network.DefaultGateways(v.n, m)
	for _, fam := range []struct {
		dst    *gatewayJSON
		g      network.Gateway
		chosen int
	}{{&j.DefaultGateways.IPv4, gws.IPv4, gw4}, {&j.DefaultGateways.IPv6, gws.IPv6, gw6}} {
		if fam.g.Router.IsValid() {
			fam.dst.GatewayIP = optional(fam.g.Router.String())
		}
		// MAAS names the link only when the owner chose it.
		if fam.chosen != 0 && fam.g.LinkID == fam.chosen {
			id := int64(fam.chosen)
			fam.dst.LinkID = &id
		}
	}
}

// overlayNetwork shows one machine's network model in its JSON (lists
// lay it on through their cache: see listNet).
func (s *Server) overlayNetwork(r *request, j *machineJSON, m *machine.Machine) error {
	n, nm, err := s.store.MachineNetwork(r.Context(), m.SystemID)
	if err != nil {
		return err
	}
	v4, v6, err := s.store.DefaultGatewayLinks(r.Context(), m.SystemID)
	if err != nil {
		return err
	}
	v, err := s.loadIfaceView(r.Context(), n)
	if err != nil {
		return err
	}
	v.overlay(j, m, nm, int(v4), int(v6))
	return nil
}
