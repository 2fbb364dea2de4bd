package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// Subnets and IP ranges carry the facts DHCP needs: MAAS spreads them over
// subnets/, vlans/ (dhcp_on) and ipranges/; Anvil keeps dhcp_on on the
// subnet, which is what an operator sets.

// subnetJSON is MAAS's subnet (DISPLAYED_SUBNET_FIELDS) and, after it,
// Anvil's DHCP fields. Anvil has no VLAN, fabric or space model yet: every
// subnet is on MAAS's default VLAN (untagged, fabric-0) in the undefined
// space, and MAAS's defaults stand for the DNS and discovery settings.
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

// vlanJSON is MAAS's VLAN object (DISPLAYED_VLAN_FIELDS).
type vlanJSON struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	VID           int       `json:"vid"`
	Fabric        string    `json:"fabric"`
	FabricID      int64     `json:"fabric_id"`
	MTU           int       `json:"mtu"`
	PrimaryRack   *string   `json:"primary_rack"`
	SecondaryRack *string   `json:"secondary_rack"`
	DHCPOn        bool      `json:"dhcp_on"`
	ExternalDHCP  *string   `json:"external_dhcp"`
	RelayVLAN     *struct{} `json:"relay_vlan"`
	Space         string    `json:"space"`
	ResourceURI   string    `json:"resource_uri"`
}

// undefinedSpace is MAAS's name for "in no space".
const undefinedSpace = "undefined"

// defaultVLAN is MAAS's default VLAN as a subnet carries it; dhcp_on is
// the subnet's own, which is where Anvil keeps it.
func defaultVLAN(dhcp bool) vlanJSON {
	return vlanJSON{ID: 5001, Name: "untagged", Fabric: "fabric-0", MTU: 1500, DHCPOn: dhcp, Space: undefinedSpace,
		ResourceURI: Prefix + "vlans/5001/"}
}

// rdnsEnabled is MAAS's RDNS_MODE.ENABLED, its default for a new subnet.
const rdnsEnabled = 2

func renderSubnet(s store.Subnet) subnetJSON {
	j := subnetJSON{ID: s.ID, Name: s.Name, VLAN: defaultVLAN(s.DHCP), Space: undefinedSpace, CIDR: s.CIDR,
		GatewayIP: optional(s.Gateway), DNSServers: s.DNSServers, RDNSMode: rdnsEnabled, AllowDNS: true, AllowProxy: true,
		Managed: true, DisabledBootArches: []string{}, ResourceURI: Prefix + "subnets/" + itoa(s.ID) + "/",
		Domain: s.Domain, DHCPOn: s.DHCP, LeaseSeconds: s.LeaseSeconds}
	if j.DNSServers == nil {
		j.DNSServers = []string{}
	}
	return j
}

// iprangeJSON is MAAS's IP range (DISPLAYED_IPRANGE_FIELDS): the subnet as
// an object, and the user who reserved it, null because Anvil does not
// record who made a range.
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
			ss, err := s.store.ListSubnets(r.Context())
			if err != nil {
				return err
			}
			out := make([]subnetJSON, 0, len(ss))
			for _, sn := range ss {
				out = append(out, renderSubnet(sn))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			sn := store.Subnet{LeaseSeconds: 3600}
			if err := applySubnetForm(r, &sn, true); err != nil {
				return err
			}
			sn, err := s.store.CreateSubnet(r.Context(), sn)
			if err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, renderSubnet(sn))
			return nil
		}),
	}
}

func (s *Server) subnetRoutes() []route {
	byID := func(r *request) (store.Subnet, error) {
		id, err := strconv.ParseInt(r.id, 10, 64)
		if err != nil {
			return store.Subnet{}, badField("id", "%q is not a subnet id", r.id)
		}
		return s.store.GetSubnet(r.Context(), id)
	}
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderSubnet(sn))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			if err := applySubnetForm(r, &sn, false); err != nil {
				return err
			}
			if sn, err = s.store.UpdateSubnet(r.Context(), sn); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, renderSubnet(sn))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			sn, err := byID(r)
			if err != nil {
				return err
			}
			if err := s.store.DeleteSubnet(r.Context(), sn.ID); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
	}
}

// applySubnetForm validates and applies the fields given.
func applySubnetForm(r *request, sn *store.Subnet, create bool) error {
	if v := r.form.Get("cidr"); v != "" || create {
		p, err := netip.ParsePrefix(v)
		if err != nil || !p.Addr().Is4() {
			return badField("cidr", "%q is not an IPv4 network such as 192.0.2.0/24", v)
		}
		sn.CIDR = p.Masked().String()
	}
	prefix := netip.MustParsePrefix(sn.CIDR)
	if v, ok := r.form["name"]; ok || create {
		sn.Name = firstOr(strings.TrimSpace(first(v)), sn.CIDR)
	}
	if v, ok := r.form["gateway_ip"]; ok {
		sn.Gateway = ""
		if g := strings.TrimSpace(first(v)); g != "" {
			a, err := netip.ParseAddr(g)
			if err != nil || !prefix.Contains(a) {
				return badField("gateway_ip", "%q is not an address in %s", g, sn.CIDR)
			}
			sn.Gateway = a.String()
		}
	}
	if v, ok := r.form["dns_servers"]; ok {
		sn.DNSServers = nil
		for _, d := range strings.FieldsFunc(strings.Join(v, ","), func(c rune) bool { return c == ',' || c == ' ' }) {
			a, err := netip.ParseAddr(d)
			if err != nil {
				return badField("dns_servers", "%q is not an IP address", d)
			}
			sn.DNSServers = append(sn.DNSServers, a.String())
		}
	}
	if v, ok := r.form["domain"]; ok {
		sn.Domain = first(v)
	}
	if _, ok := r.form["dhcp_on"]; ok {
		on, err := boolParam(r, "dhcp_on")
		if err != nil {
			return err
		}
		sn.DHCP = on
	}
	if v, ok, err := intParam(r, "lease_seconds", 60); err != nil {
		return err
	} else if ok {
		sn.LeaseSeconds = v
	}
	return nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (s *Server) ipRangesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			rs, err := s.store.ListIPRanges(r.Context())
			if err != nil {
				return err
			}
			subnets, err := s.store.ListSubnets(r.Context())
			if err != nil {
				return err
			}
			byID := make(map[int64]store.Subnet, len(subnets))
			for _, sn := range subnets {
				byID[sn.ID] = sn
			}
			out := make([]iprangeJSON, 0, len(rs))
			for _, ir := range rs {
				out = append(out, renderRange(ir, byID[ir.SubnetID]))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, s.createIPRange),
	}
}

func renderRange(ir store.IPRange, sn store.Subnet) iprangeJSON {
	return iprangeJSON{ID: ir.ID, Type: ir.Type, StartIP: ir.Start, EndIP: ir.End, Comment: ir.Comment,
		Subnet: renderSubnet(sn), ResourceURI: Prefix + "ipranges/" + itoa(ir.ID) + "/"}
}

// createIPRange checks that the range lies in its subnet and overlaps no
// other range there: an address in two ranges would be both handed out
// and reserved.
func (s *Server) createIPRange(w http.ResponseWriter, r *request) error {
	typ := firstOr(r.form.Get("type"), "dynamic")
	if typ != "dynamic" && typ != "reserved" {
		return badField("type", "%q: use dynamic or reserved", typ)
	}
	start, err1 := netip.ParseAddr(r.form.Get("start_ip"))
	end, err2 := netip.ParseAddr(r.form.Get("end_ip"))
	if err1 != nil || err2 != nil || !start.Is4() || !end.Is4() || end.Less(start) {
		return badField("start_ip", "start_ip and end_ip must be IPv4 addresses with start_ip <= end_ip")
	}
	subnets, err := s.store.ListSubnets(r.Context())
	if err != nil {
		return err
	}
	var sn *store.Subnet
	ref := r.form.Get("subnet")
	for i := range subnets {
		if itoa(subnets[i].ID) == ref || subnets[i].CIDR == ref || (ref == "" && netip.MustParsePrefix(subnets[i].CIDR).Contains(start)) {
			sn = &subnets[i]
			break
		}
	}
	if sn == nil {
		return badField("subnet", "no subnet %q (give its id or CIDR, or a range inside a known subnet)", ref)
	}
	p := netip.MustParsePrefix(sn.CIDR)
	if !p.Contains(start) || !p.Contains(end) {
		return badField("start_ip", "the range %s-%s is not inside %s", start, end, sn.CIDR)
	}
	ranges, err := s.store.ListIPRanges(r.Context())
	if err != nil {
		return err
	}
	for _, o := range ranges {
		os, oe := netip.MustParseAddr(o.Start), netip.MustParseAddr(o.End)
		if o.SubnetID == sn.ID && !(end.Less(os) || oe.Less(start)) {
			return &conflict{sprintf("the range %s-%s overlaps %s range %s-%s (id %d)", start, end, o.Type, o.Start, o.End, o.ID)}
		}
	}
	ir, err := s.store.CreateIPRange(r.Context(), store.IPRange{SubnetID: sn.ID, Type: typ, Start: start.String(), End: end.String(), Comment: r.form.Get("comment")})
	if err != nil {
		return err
	}
	s.svc.Hub.Notify()
	writeJSON(w, http.StatusOK, renderRange(ir, *sn))
	return nil
}

func (s *Server) ipRangeRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			rs, err := s.store.ListIPRanges(r.Context())
			if err != nil {
				return err
			}
			for _, ir := range rs {
				if itoa(ir.ID) != r.id {
					continue
				}
				subnets, err := s.store.ListSubnets(r.Context())
				if err != nil {
					return err
				}
				for _, sn := range subnets {
					if sn.ID == ir.SubnetID {
						writeJSON(w, http.StatusOK, renderRange(ir, sn))
						return nil
					}
				}
			}
			return errNoIPRange
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			id, err := strconv.ParseInt(r.id, 10, 64)
			if err != nil {
				return badField("id", "%q is not a range id", r.id)
			}
			if err := s.store.DeleteIPRange(r.Context(), id); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
	}
}

var errNoIPRange = fmt.Errorf("No IPRange matches the given query: %w", store.ErrNotFound)
