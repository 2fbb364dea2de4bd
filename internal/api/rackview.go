package api

import (
	"encoding/json"
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
}

// staleReport is when a report no longer says how the rack is.
const staleReport = 3 * rack.StatusEvery

// renderRack renders a rack with what it last reported: interfaces,
// addresses, the VLANs it serves, BMC networks and services.
func renderRack(n names, v *netView, k store.Rack, now time.Time) controllerJSON {
	c := renderController(n, k.SystemID, k.Hostname, k.Version, k.Address, k.Seen, nodeTypeRack, "rackd", now)
	d := &RackFields{Enrolled: k.Enrolled, BMCNetworks: []string{}, VLANs: []rackVLANJSON{}}
	c.RackFields = d
	var st rack.Status
	if k.Report == "" || json.Unmarshal([]byte(k.Report), &st) != nil {
		d.VLANs = rackVLANs(v, k.SystemID, nil)
		return c
	}
	at := k.Reported.UTC().Format(time.RFC3339)
	d.LastReport, d.BMCNetworks = &at, append(d.BMCNetworks, st.BMCNetworks...)
	var addrs []netip.Addr
	for i, si := range st.Interfaces {
		j, ips := rackIface(v, k.SystemID, int64(i+1), si)
		c.Interfaces = append(c.Interfaces, j)
		addrs = append(addrs, ips...)
	}
	if len(addrs) > 0 {
		c.IPAddresses = c.IPAddresses[:0]
		for _, a := range addrs {
			if !a.IsLinkLocalUnicast() {
				c.IPAddresses = append(c.IPAddresses, a.String())
			}
		}
	}
	d.VLANs = rackVLANs(v, k.SystemID, addrs)
	stale := now.Sub(k.Reported) > staleReport
	for _, sv := range st.Services {
		j := serviceJSON{Name: sv.Name, Status: sv.Status, StatusInfo: sv.Info}
		if stale {
			j.Status, j.StatusInfo = rack.StatusUnknown, "no report since "+at
		}
		c.Services = append(c.Services, j)
	}
	return c
}

// rackIface renders a reported interface with its addresses as links to
// the subnets that hold them.
func rackIface(v *netView, systemID string, id int64, si rack.StatusInterface) (ifaceJSON, []netip.Addr) {
	j := ifaceJSON{
		ID: id, Name: si.Name, Type: "physical", Enabled: si.Up, MACAddress: si.MAC, Params: "",
		Tags: []string{}, Links: []any{}, EffectiveMTU: si.MTU, Parents: []string{}, Children: []string{},
		LinkConnected: si.Up, SystemID: systemID, Discovered: []any{},
		ResourceURI: Prefix + "rackcontrollers/" + systemID + "/",
	}
	var ips []netip.Addr
	for li, a := range si.Addresses {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		ips = append(ips, p.Addr())
		l := linkJSON{ID: id*100 + int64(li), Mode: "static", IPAddress: p.Addr().String()}
		if sn, ok := subnetHolding(v, p.Addr()); ok {
			sj := v.renderSubnet(sn)
			l.Subnet = &sj
			if j.VLAN == nil {
				vj := v.renderVLAN(v.vlan(sn.VLANID))
				j.VLAN = &vj
			}
		}
		j.Links = append(j.Links, l)
	}
	return j, ips
}

func subnetHolding(v *netView, a netip.Addr) (store.Subnet, bool) {
	for _, sn := range v.subnets {
		if p, err := netip.ParsePrefix(sn.CIDR); err == nil && p.Contains(a) {
			return sn, true
		}
	}
	return store.Subnet{}, false
}

// rackVLANs are the VLANs the rack is primary or secondary of, then
// those its addresses are on.
func rackVLANs(v *netView, systemID string, addrs []netip.Addr) []rackVLANJSON {
	out := []rackVLANJSON{}
	role := map[int64]string{}
	for _, vl := range v.vlans {
		switch systemID {
		case vl.PrimaryRack:
			role[vl.ID] = "primary"
		case vl.SecondaryRack:
			role[vl.ID] = "secondary"
		}
	}
	for _, a := range addrs {
		if sn, ok := subnetHolding(v, a); ok && role[sn.VLANID] == "" {
			role[sn.VLANID] = "connected"
		}
	}
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
