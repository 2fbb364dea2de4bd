package api

import (
	"net/netip"
	"slices"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// rackVLANJSON is a VLAN a rack serves: as its primary or secondary
// rack, or because one of its interfaces has an address on the VLAN's
// subnets ("connected").
type rackVLANJSON struct {
	ID       int64  `json:"id"`
	VID      int    `json:"vid"`
	Name     string `json:"name"`
	Fabric   string `json:"fabric"`
	FabricID int64  `json:"fabric_id"`
	Role     string `json:"role"`
	DHCPOn   bool   `json:"dhcp_on"`
}

// RackFields are Anvil's fields of a rack beyond MAAS's (exported only
// so that encoding/json inlines them into controllerJSON).
type RackFields struct {
	Enrolled    bool           `json:"enrolled"`
	BMCNetworks []string       `json:"bmc_networks"`
	VLANs       []rackVLANJSON `json:"vlans"`
	LastReport  *string        `json:"last_report"`
	// GrantedBMCNetworks and ServedSubnets are what an administrator
	// trusts the rack with (PUT rackcontrollers/<id>/); BMCNetworks are
	// what it declares.
	GrantedBMCNetworks []string `json:"granted_bmc_networks"`
	ServedSubnets      []string `json:"served_subnets"`
}

// renderRack renders a rack with what it last reported: interfaces,
// addresses, the VLANs it serves, BMC networks and services.
func renderRack(n names, v *netView, k store.Rack, now time.Time) controllerJSON {
	c := renderController(n, k.SystemID, k.Hostname, k.Version, k.Address, k.Seen, nodeTypeRack, "rackd", now)
	rv := rack.ViewOf(k, now)
	d := &RackFields{Enrolled: k.Enrolled, BMCNetworks: []string{}, VLANs: rackVLANs(v, rv),
		GrantedBMCNetworks: append([]string{}, k.BMCNetworks...), ServedSubnets: append([]string{}, k.Subnets...)}
	c.RackFields = d
	if !rv.HasReport {
		return c
	}
	at := k.Reported.UTC().Format(time.RFC3339)
	d.LastReport, d.BMCNetworks = &at, append(d.BMCNetworks, rv.Status.BMCNetworks...)
	for i, si := range rv.Status.Interfaces {
		c.Interfaces = append(c.Interfaces, rackIface(v, k.SystemID, int64(i+1), si))
	}
	if addrs := rv.Addresses(); len(addrs) > 0 {
		c.IPAddresses = c.IPAddresses[:0]
		for _, a := range addrs {
			if !a.IsLinkLocalUnicast() {
				c.IPAddresses = append(c.IPAddresses, a.String())
			}
		}
	}
	c.Services = c.Services[:0]
	for _, sv := range rv.Services() {
		c.Services = append(c.Services, serviceJSON{Name: sv.Name, Status: sv.Status, StatusInfo: sv.Info})
	}
	return c
}

// rackIface renders a reported interface with its addresses as links to
// the subnets that hold them.
func rackIface(v *netView, systemID string, id int64, si rack.StatusInterface) ifaceJSON {
	j := ifaceJSON{
		ID: id, Name: si.Name, Type: "physical", Enabled: si.Up, MACAddress: si.MAC, Params: "",
		Tags: []string{}, Links: []any{}, EffectiveMTU: si.MTU, Parents: []string{}, Children: []string{},
		LinkConnected: si.Up, SystemID: systemID, Discovered: []any{},
		ResourceURI: Prefix + "rackcontrollers/" + systemID + "/",
	}
	for li, a := range si.Addresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		l := linkJSON{ID: id*100 + int64(li), Mode: "static", IPAddress: p.Addr().String()}
		if sn, ok := rack.SubnetHolding(v.subnets, p.Addr()); ok {
			sj := v.renderSubnet(sn)
			l.Subnet = &sj
			if j.VLAN == nil {
				vj := v.renderVLAN(v.vlan(sn.VLANID))
				j.VLAN = &vj
			}
		}
		j.Links = append(j.Links, l)
	}
	return j
}

// rackVLANs are the VLANs the rack serves, by id.
func rackVLANs(v *netView, rv rack.View) []rackVLANJSON {
	out := []rackVLANJSON{}
	role := rv.VLANRoles(v.vlans, v.subnets)
	for _, vl := range v.vlans {
		if r := role[vl.ID]; r != "" {
			j := v.renderVLAN(vl)
			name := ""
			if j.Name != nil {
				name = *j.Name
			}
			out = append(out, rackVLANJSON{ID: vl.ID, VID: vl.VID, Name: name, Fabric: j.Fabric, FabricID: vl.FabricID, Role: r, DHCPOn: j.DHCPOn})
		}
	}
	slices.SortStableFunc(out, func(a, b rackVLANJSON) int { return int(a.ID - b.ID) })
	return out
}
