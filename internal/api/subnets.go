package api

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// Subnets are on VLANs, as MAAS has them. DHCP is served on a subnet when
// its VLAN's dhcp_on is set (MAAS's switch) or its own dhcp_on is (Anvil's,
// which older clients of subnets/ set); either way its dynamic ranges are
// what is leased.

// subnetJSON is MAAS's subnet (DISPLAYED_SUBNET_FIELDS) and, after it,
// Anvil's DHCP fields.
type subnetJSON struct {
	ID                 int64    `json:"id"`
	Name               string   `json:"name"`
	Description        string   `json:"description"`
	VLAN               vlanJSON `json:"vlan"`
	Space              string   `json:"space"`
	CIDR               string   `json:"cidr"`
	GatewayIP          *string  `json:"gateway_ip"`
	DNSServers         []string `json:"dns_servers"`
	RDNSMode           int      `json:"rdns_mode"`
	ActiveDiscovery    bool     `json:"active_discovery"`
	AllowDNS           bool     `json:"allow_dns"`
	AllowProxy         bool     `json:"allow_proxy"`
	Managed            bool     `json:"managed"`
	DisabledBootArches []string `json:"disabled_boot_architectures"`
	ResourceURI        string   `json:"resource_uri"`

	Domain       string `json:"domain"`
	DHCPOn       bool   `json:"dhcp_on"`
	LeaseSeconds int    `json:"lease_seconds"`
}

// undefinedSpace is MAAS's name for "in no space".
const undefinedSpace = "undefined"

// rdnsEnabled is MAAS's RDNS_MODE.RFC2317, its default for a new subnet.
const rdnsEnabled = 2

func (v *netView) renderSubnet(s store.Subnet) subnetJSON {
	vl := v.vlan(s.VLANID)
	j := subnetJSON{ID: s.ID, Name: s.Name, Description: s.Description, VLAN: v.renderVLAN(vl), Space: v.spaceName(vl.SpaceID),
		CIDR: s.CIDR, GatewayIP: optional(s.Gateway), DNSServers: s.DNSServers, RDNSMode: s.RDNSMode, AllowDNS: s.AllowDNS,
		AllowProxy: s.AllowProxy, Managed: s.Managed, ActiveDiscovery: s.ActiveDiscovery,
		DisabledBootArches: s.DisabledBootArchitectures, ResourceURI: Prefix + "subnets/" + itoa(s.ID) + "/",
		Domain: s.Domain, DHCPOn: s.DHCP, LeaseSeconds: s.LeaseSeconds}
	if j.DNSServers == nil {
		j.DNSServers = []string{}
	}
	if j.DisabledBootArches == nil {
		j.DisabledBootArches = []string{}
	}
	return j
}

// iprangeJSON is MAAS's IP range (DISPLAYED_IPRANGE_FIELDS): the subnet as
// an object, and the user who made it (null for ranges from before Anvil
// recorded it).
type iprangeJSON struct {
	ID          int64      `json:"id"`
	Type        string     `json:"type"`
	StartIP     string     `json:"start_ip"`
	EndIP       string     `json:"end_ip"`
	Comment     string     `json:"comment"`
	User        *userJSON  `json:"user"`
	Subnet      subnetJSON `json:"subnet"`
	ResourceURI string     `json:"resource_uri"`
}

func (s *Server) subnetsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			out := make([]subnetJSON, 0, len(v.subnets))
			for _, sn := range v.subnets {
				out = append(out, v.renderSubnet(sn))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			// MAAS's defaults for a new subnet.
			sn := store.Subnet{LeaseSeconds: 3600, Managed: true, AllowDNS: true, AllowProxy: true, RDNSMode: rdnsEnabled}
			return s.saveSubnet(w, r, sn, true)
		}),
	}
}

// subnetByRef finds a subnet by its id or its name.
func (s *Server) subnetByRef(r *request, ref string) (store.Subnet, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		return s.store.GetSubnet(r.Context(), id)
	}
	ss, err := s.store.ListSubnets(r.Context())
	if err != nil {
		return store.Subnet{}, err
	}
	for _, sn := range ss {
		if sn.Name == ref || sn.CIDR == ref {
			return sn, nil
		}
	}
	return store.Subnet{}, noSuch("Subnet")
}

func (s *Server) subnetRoutes() []route {
	byID := func(r *request) (store.Subnet, error) { return s.subnetByRef(r, r.id) }
	return append([]route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			return s.writeSubnet(w, r, sn)
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			return s.saveSubnet(w, r, sn, false)
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			vl, err := s.store.GetVLAN(r.Context(), sn.VLANID)
			if err != nil {
				return err
			}
			rs, err := s.store.ListIPRanges(r.Context())
			if err != nil {
				return err
			}
			for _, ir := range rs {
				if vl.DHCPOn && ir.SubnetID == sn.ID && ir.Type == string(network.RangeDynamic) {
					return &badRequest{"Cannot delete a subnet that is actively servicing a dynamic IP range. " +
						"(Delete the dynamic range or disable DHCP first.)"}
				}
			}
			if err := s.store.DeleteSubnet(r.Context(), sn.ID); err != nil {
				if errors.Is(err, store.ErrInUse) {
					return &badRequest{"Cannot delete a subnet that has IP addresses in use by nodes."}
				}
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
	}, s.subnetOps(byID)...)
}

func (s *Server) writeSubnet(w http.ResponseWriter, r *request, sn store.Subnet) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderSubnet(sn))
	return nil
}

// saveSubnet applies the form, checks the subnet with the network model's
// rules (a CIDR without host bits, overlapping no other subnet, a gateway
// inside it, a VLAN that exists) and stores it.
func (s *Server) saveSubnet(w http.ResponseWriter, r *request, sn store.Subnet, create bool) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	if err := applySubnetForm(r, v, &sn, create); err != nil {
		return err
	}
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	ns := store.NetworkSubnet(sn)
	if create {
		ns.ID = -1
	}
	if err := network.ValidateSubnet(n, ns).Err(); err != nil {
		return err
	}
	if create {
		sn, err = s.store.CreateSubnet(r.Context(), sn)
	} else {
		sn, err = s.store.UpdateSubnet(r.Context(), sn)
	}
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField("name", "Subnet with this Name already exists.")
	}
	if err != nil {
		return err
	}
	s.svc.Hub.Notify()
	return s.writeSubnet(w, r, sn)
}

// applySubnetForm validates and applies the fields given.
func applySubnetForm(r *request, v *netView, sn *store.Subnet, create bool) error {
	if val := r.form.Get("cidr"); val != "" || create {
		p, err := netip.ParsePrefix(strings.TrimSpace(val))
		if err != nil {
			return badField("cidr", "%q is not a network. Required format: <network>/<prefixlen>.", strings.TrimSpace(val))
		}
		sn.CIDR = p.Masked().String() // as MAAS stores it
	}
	if val, ok := r.form["name"]; ok || create {
		sn.Name = firstOr(strings.TrimSpace(first(val)), sn.CIDR)
	}
	if val, ok := r.form["description"]; ok {
		sn.Description = first(val)
	}
	if err := applySubnetVLAN(r, v, sn); err != nil {
		return err
	}
	if val, ok := r.form["gateway_ip"]; ok {
		sn.Gateway = ""
		if g := strings.TrimSpace(first(val)); g != "" {
			a, err := netip.ParseAddr(g)
			if err != nil {
				return badField("gateway_ip", "Enter a valid IPv4 or IPv6 address.")
			}
			sn.Gateway = a.String()
		}
	}
	if val, ok := r.form["dns_servers"]; ok {
		sn.DNSServers = nil
		for _, d := range strings.FieldsFunc(strings.Join(val, ","), func(c rune) bool { return c == ',' || c == ' ' }) {
			a, err := netip.ParseAddr(d)
			if err != nil {
				return badField("dns_servers", "Enter a valid IPv4 or IPv6 address.")
			}
			sn.DNSServers = append(sn.DNSServers, a.String())
		}
	}
	if val, ok := r.form["domain"]; ok {
		sn.Domain = first(val)
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"dhcp_on", &sn.DHCP}, {"managed", &sn.Managed}, {"allow_dns", &sn.AllowDNS}, {"allow_proxy", &sn.AllowProxy},
		{"active_discovery", &sn.ActiveDiscovery}} {
		if _, ok := r.form[f.name]; ok {
			on, err := boolParam(r, f.name)
			if err != nil {
				return err
			}
			*f.dst = on
		}
	}
	if val, ok := r.form["rdns_mode"]; ok {
		m, err := strconv.Atoi(strings.TrimSpace(first(val)))
		if err != nil || m < 0 || m > 2 {
			return badField("rdns_mode", "Select a valid choice. %s is not one of the available choices.", first(val))
		}
		sn.RDNSMode = m
	}
	if _, ok := r.form["disabled_boot_architectures"]; ok {
		sn.DisabledBootArchitectures = list(r, "disabled_boot_architectures")
	}
	if val, ok, err := intParam(r, "lease_seconds", 60, network.MaxLeaseSeconds); err != nil {
		return err
	} else if ok {
		sn.LeaseSeconds = val
	}
	if sn.DHCP && !netip.MustParsePrefix(sn.CIDR).Addr().Is4() {
		return badField("dhcp_on", "Anvil's DHCP server serves IPv4 subnets only.")
	}
	return nil
}

// applySubnetVLAN places the subnet as MAAS's form does: on the VLAN
// given by id; else on the VLAN with the vid given on the fabric given
// (the default fabric when none is); else on the fabric's untagged VLAN.
// A new subnet given none of them goes on fabric-0's untagged VLAN.
func applySubnetVLAN(r *request, v *netView, sn *store.Subnet) error {
	vlanRef, fabricRef, vidRef := strings.TrimSpace(r.form.Get("vlan")), strings.TrimSpace(r.form.Get("fabric")), strings.TrimSpace(r.form.Get("vid"))
	if vlanRef != "" {
		id, err := strconv.ParseInt(vlanRef, 10, 64)
		if err != nil || !v.hasVLAN(id) {
			return badField("vlan", "Select a valid choice. That choice is not one of the available choices.")
		}
		sn.VLANID = id
		return nil
	}
	if fabricRef == "" && vidRef == "" && sn.VLANID != 0 {
		return nil
	}
	fabric := store.DefaultFabricID
	if fabricRef != "" {
		id, err := strconv.ParseInt(fabricRef, 10, 64)
		if _, ok := v.fabrics[id]; err != nil || !ok {
			return badField("fabric", "Select a valid choice. That choice is not one of the available choices.")
		}
		fabric = id
	}
	vid := 0
	if vidRef != "" {
		n, err := strconv.Atoi(vidRef)
		if err != nil {
			return badField("vid", "Enter a whole number.")
		}
		vid = n
	}
	for _, vl := range v.vlans {
		if vl.FabricID == fabric && vl.VID == vid {
			sn.VLANID = vl.ID
			return nil
		}
	}
	return badField("vid", "No VLAN with vid %d in %s.", vid, v.fabrics[fabric].Name)
}

func (v *netView) hasVLAN(id int64) bool {
	for _, vl := range v.vlans {
		if vl.ID == id {
			return true
		}
	}
	return false
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
