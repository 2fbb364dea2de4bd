package api

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// Subnets and IP ranges carry the facts DHCP needs: MAAS spreads them over
// subnets/, vlans/ (dhcp_on) and ipranges/; Anvil keeps dhcp_on on the
// subnet, which is what an operator sets.

type subnetJSON struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	CIDR         string   `json:"cidr"`
	GatewayIP    *string  `json:"gateway_ip"`
	DNSServers   []string `json:"dns_servers"`
	Domain       string   `json:"domain"`
	DHCPOn       bool     `json:"dhcp_on"`
	LeaseSeconds int      `json:"lease_seconds"`
	ResourceURI  string   `json:"resource_uri"`
}

func renderSubnet(s store.Subnet) subnetJSON {
	j := subnetJSON{ID: s.ID, Name: s.Name, CIDR: s.CIDR, DNSServers: s.DNSServers, Domain: s.Domain, DHCPOn: s.DHCP,
		LeaseSeconds: s.LeaseSeconds, ResourceURI: Prefix + "subnets/" + itoa(s.ID) + "/"}
	if j.DNSServers == nil {
		j.DNSServers = []string{}
	}
	if s.Gateway != "" {
		g := s.Gateway
		j.GatewayIP = &g
	}
	return j
}

type iprangeJSON struct {
	ID          int64  `json:"id"`
	Type        string `json:"type"`
	StartIP     string `json:"start_ip"`
	EndIP       string `json:"end_ip"`
	Subnet      int64  `json:"subnet"`
	Comment     string `json:"comment"`
	ResourceURI string `json:"resource_uri"`
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
			out := make([]iprangeJSON, 0, len(rs))
			for _, ir := range rs {
				out = append(out, renderRange(ir))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, s.createIPRange),
	}
}

func renderRange(ir store.IPRange) iprangeJSON {
	return iprangeJSON{ID: ir.ID, Type: ir.Type, StartIP: ir.Start, EndIP: ir.End, Subnet: ir.SubnetID, Comment: ir.Comment,
		ResourceURI: Prefix + "ipranges/" + itoa(ir.ID) + "/"}
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
	writeJSON(w, http.StatusOK, renderRange(ir))
	return nil
}

func (s *Server) ipRangeRoutes() []route {
	return []route{
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
