package api

import (
	"context"
	"net/http"

	"github.com/anvilmetal/anvil/internal/store"
)

// netView is the site's fabrics, VLANs, spaces and subnets, read once for
// a request, to render objects that name one another (a subnet carries
// its VLAN, a fabric its VLANs).
type netView struct {
	fabrics map[int64]store.Fabric
	vlans   []store.VLAN
	spaces  map[int64]store.Space
	subnets []store.Subnet
}

func (s *Server) netView(ctx context.Context) (*netView, error) {
	fs, err := s.store.ListFabrics(ctx)
	if err != nil {
		return nil, err
	}
	vs, err := s.store.ListVLANs(ctx)
	if err != nil {
		return nil, err
	}
	sps, err := s.store.ListSpaces(ctx)
	if err != nil {
		return nil, err
	}
	sns, err := s.store.ListSubnets(ctx)
	if err != nil {
		return nil, err
	}
	v := &netView{fabrics: map[int64]store.Fabric{}, vlans: vs, spaces: map[int64]store.Space{}, subnets: sns}
	for _, f := range fs {
		v.fabrics[f.ID] = f
	}
	for _, sp := range sps {
		v.spaces[sp.ID] = sp
	}
	return v, nil
}

func (v *netView) vlan(id int64) store.VLAN {
	for _, vl := range v.vlans {
		if vl.ID == id {
			return vl
		}
	}
	return store.VLAN{ID: id}
}

func (v *netView) subnet(id int64) store.Subnet {
	for _, sn := range v.subnets {
		if sn.ID == id {
			return sn
		}
	}
	return store.Subnet{ID: id}
}

// spaceName is MAAS's name of a VLAN's space: "undefined" for none.
func (v *netView) spaceName(id int64) string {
	if sp, ok := v.spaces[id]; ok {
		return sp.Name
	}
	return undefinedSpace
}

// dhcpOn is whether DHCP is served on the VLAN: by MAAS's switch, the
// VLAN's dhcp_on, or by Anvil's per-subnet one on any of its subnets.
func (v *netView) dhcpOn(vl store.VLAN) bool {
	if vl.DHCPOn {
		return true
	}
	for _, sn := range v.subnets {
		if sn.VLANID == vl.ID && sn.DHCP {
			return true
		}
	}
	return false
}

// vlanJSON is MAAS's VLAN object (DISPLAYED_VLAN_FIELDS).
type vlanJSON struct {
	ID            int64     `json:"id"`
	Name          *string   `json:"name"`
	VID           int       `json:"vid"`
	Fabric        string    `json:"fabric"`
	FabricID      int64     `json:"fabric_id"`
	MTU           int       `json:"mtu"`
	PrimaryRack   *string   `json:"primary_rack"`
	SecondaryRack *string   `json:"secondary_rack"`
	DHCPOn        bool      `json:"dhcp_on"`
	ExternalDHCP  *string   `json:"external_dhcp"`
	RelayVLAN     *vlanJSON `json:"relay_vlan"`
	Space         string    `json:"space"`
	ResourceURI   string    `json:"resource_uri"`
}

func (v *netView) renderVLAN(vl store.VLAN) vlanJSON {
	name := optional(vl.Name)
	if vl.VID == 0 {
		name = optional("untagged")
	}
	j := vlanJSON{ID: vl.ID, Name: name, VID: vl.VID, Fabric: v.fabrics[vl.FabricID].Name, FabricID: vl.FabricID, MTU: vl.MTU,
		PrimaryRack: optional(vl.PrimaryRack), SecondaryRack: optional(vl.SecondaryRack), DHCPOn: v.dhcpOn(vl),
		Space: v.spaceName(vl.SpaceID), ResourceURI: Prefix + "vlans/" + itoa(vl.ID) + "/"}
	if vl.RelayVLANID != 0 && vl.RelayVLANID != vl.ID {
		relay := v.vlan(vl.RelayVLANID)
		relay.RelayVLANID = 0 // one level, as MAAS nests it
		r := v.renderVLAN(relay)
		j.RelayVLAN = &r
	}
	return j
}

// fabricJSON is MAAS's fabric (DISPLAYED_FABRIC_FIELDS).
type fabricJSON struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	ClassType   *string    `json:"class_type"`
	Description string     `json:"description"`
	VLANs       []vlanJSON `json:"vlans"`
	ResourceURI string     `json:"resource_uri"`
}

func (v *netView) renderFabric(f store.Fabric) fabricJSON {
	j := fabricJSON{ID: f.ID, Name: f.Name, ClassType: optional(f.ClassType), Description: f.Description, VLANs: []vlanJSON{},
		ResourceURI: Prefix + "fabrics/" + itoa(f.ID) + "/"}
	for _, vl := range v.vlans {
		if vl.FabricID == f.ID {
			j.VLANs = append(j.VLANs, v.renderVLAN(vl))
		}
	}
	return j
}

// spaceJSON is MAAS's space (DISPLAYED_SPACE_FIELDS).
type spaceJSON struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	VLANs       []vlanJSON   `json:"vlans"`
	Subnets     []subnetJSON `json:"subnets"`
	ResourceURI string       `json:"resource_uri"`
}

func (v *netView) renderSpace(sp store.Space) spaceJSON {
	j := spaceJSON{ID: sp.ID, Name: sp.Name, Description: sp.Description, VLANs: []vlanJSON{}, Subnets: []subnetJSON{},
		ResourceURI: Prefix + "spaces/" + itoa(sp.ID) + "/"}
	for _, vl := range v.vlans {
		if vl.SpaceID == sp.ID {
			j.VLANs = append(j.VLANs, v.renderVLAN(vl))
			for _, sn := range v.subnets {
				if sn.VLANID == vl.ID {
					j.Subnets = append(j.Subnets, v.renderSubnet(sn))
				}
			}
		}
	}
	return j
}

// objectRoutes are the read, update and delete of one network object:
// find it from the path, then render it, save the form onto it, or
// delete it (each change tells the racks). Administrators change, unless
// change says who else may (save and remove then decide).
func objectRoutes[T any](s *Server, find func(*request) (T, error), render func(*request, *netView, T) any,
	save func(http.ResponseWriter, *request, T) error, remove func(*request, T) error, change ...access) []route {
	who := adminOnly
	if len(change) > 0 {
		who = change[0]
	}
	found := func(fn func(http.ResponseWriter, *request, T) error) handlerFunc {
		return func(w http.ResponseWriter, r *request) error {
			o, err := find(r)
			if err != nil {
				return err
			}
			return fn(w, r, o)
		}
	}
	return []route{
		get("", authenticated, found(func(w http.ResponseWriter, r *request, o T) error {
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, render(r, v, o))
			return nil
		})),
		put(who, found(save)),
		del(who, found(func(w http.ResponseWriter, r *request, o T) error {
			if err := remove(r, o); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		})),
	}
}
