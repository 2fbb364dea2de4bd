package api

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) ipRangesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			rs, err := s.store.ListIPRanges(r.Context())
			if err != nil {
				return err
			}
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			out := make([]iprangeJSON, 0, len(rs))
			for _, ir := range rs {
				out = append(out, s.renderRange(r, v, ir))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		// Users reserve ranges; dynamic ones, which DHCP hands out, are
		// for administrators (MAAS's rule).
		post("", authenticated, func(w http.ResponseWriter, r *request) error {
			ir := store.IPRange{Type: string(network.RangeDynamic), Owner: r.who.user.Name}
			return s.saveRange(w, r, ir, true)
		}),
	}
}

// renderRange renders a range with its subnet and owner; an owner no
// longer known reads as null.
func (s *Server) renderRange(r *request, v *netView, ir store.IPRange) iprangeJSON {
	j := iprangeJSON{ID: ir.ID, Type: ir.Type, StartIP: ir.Start, EndIP: ir.End, Comment: ir.Comment,
		Subnet: v.renderSubnet(v.subnet(ir.SubnetID)), ResourceURI: Prefix + "ipranges/" + itoa(ir.ID) + "/"}
	if ir.Owner != "" {
		if u, err := s.store.GetUser(r.Context(), ir.Owner); err == nil {
			uj := renderUser(u)
			j.User = &uj
		}
	}
	return j
}

// saveRange applies the form and checks the range with the network
// model's rules: in its subnet, in order, clear of the subnet's other
// ranges. The subnet, when not given, is the one holding start_ip.
func (s *Server) saveRange(w http.ResponseWriter, r *request, ir store.IPRange, create bool) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	if val, ok := r.form["type"]; ok {
		ir.Type = strings.TrimSpace(first(val))
	}
	if !r.who.user.Admin && ir.Type == string(network.RangeDynamic) {
		return &statusError{http.StatusForbidden, "Unable to create dynamic IP range. You don't have sufficient privileges."}
	}
	if val, ok := r.form["comment"]; ok {
		ir.Comment = first(val)
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"start_ip", &ir.Start}, {"end_ip", &ir.End}} {
		if val, ok := r.form[f.name]; ok || create {
			a, err := netip.ParseAddr(strings.TrimSpace(first(val)))
			if err != nil {
				return badField(f.name, "Enter a valid IPv4 or IPv6 address.")
			}
			*f.dst = a.String()
		}
	}
	if ref := strings.TrimSpace(r.form.Get("subnet")); ref != "" {
		sn, err := s.subnetByRef(r, ref)
		if err != nil {
			return badField("subnet", "Select a valid choice. That choice is not one of the available choices.")
		}
		ir.SubnetID = sn.ID
	} else if create {
		start := netip.MustParseAddr(ir.Start)
		for _, sn := range v.subnets {
			if p, err := netip.ParsePrefix(sn.CIDR); err == nil && p.Contains(start) {
				ir.SubnetID = sn.ID
			}
		}
		if ir.SubnetID == 0 {
			return badField("subnet", "No subnet holds %s: give the range's subnet.", ir.Start)
		}
	}
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	nr := store.NetworkRange(ir)
	if create {
		nr.ID = -1
	}
	if err := network.ValidateRange(n, nr).Err(); err != nil {
		return err
	}
	if create {
		ir, err = s.store.CreateIPRange(r.Context(), ir)
	} else {
		ir, err = s.store.UpdateIPRange(r.Context(), ir)
	}
	if err != nil {
		return err
	}
	s.svc.Hub.Notify()
	if v, err = s.netView(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderRange(r, v, ir))
	return nil
}

func (s *Server) ipRangeRoutes() []route {
	byID := func(r *request) (store.IPRange, error) {
		id, err := strconv.ParseInt(r.id, 10, 64)
		if err != nil {
			return store.IPRange{}, errNoIPRange
		}
		ir, err := s.store.GetIPRange(r.Context(), id)
		if err != nil {
			return ir, errNoIPRange
		}
		return ir, nil
	}
	// A user changes the ranges they made; administrators any.
	owned := func(r *request, ir store.IPRange) error {
		if !r.who.user.Admin && ir.Owner != r.who.user.Name {
			return &statusError{http.StatusForbidden, "Unable to modify IP range. You don't own the IP range."}
		}
		return nil
	}
	return objectRoutes(s, byID, func(r *request, v *netView, ir store.IPRange) any { return s.renderRange(r, v, ir) },
		func(w http.ResponseWriter, r *request, ir store.IPRange) error {
			if err := owned(r, ir); err != nil {
				return err
			}
			return s.saveRange(w, r, ir, false)
		},
		func(r *request, ir store.IPRange) error {
			if err := owned(r, ir); err != nil {
				return err
			}
			return s.store.DeleteIPRange(r.Context(), ir.ID)
		}, authenticated)
}

var errNoIPRange = noSuch("IPRange")
