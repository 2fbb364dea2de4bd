package api

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// reservedips/: MAAS 3.6's reserved IPs. An address kept for a MAC: the
// racks' DHCP answers the MAC with it, the MAC's AUTO link takes it at
// deploy, and no other MAC gets it.

func init() {
	addDocs(map[string]string{
		"ReservedIpsHandler":      "Reserved IPs: addresses kept for a MAC address on a subnet.",
		"ReservedIpsHandler read": doc("List the reserved IPs."),
		"ReservedIpsHandler create": doc("Reserve an IP for a MAC address (administrators).", with("", []string{
			req("ip", "string", "The address to reserve."),
			opt("subnet", "integer", "The subnet's id (or name, or CIDR); the one holding ip when not given."),
			req("mac_address", "string", "The MAC address the address is kept for."),
			opt("comment", "string", "What it is for.")})...),
		"ReservedIpHandler":        "One reserved IP, by its id.",
		"ReservedIpHandler read":   doc("Read a reserved IP."),
		"ReservedIpHandler update": doc("Change a reserved IP's comment (administrators); its address, MAC and subnet are fixed.", with("", []string{opt("comment", "string", "What it is for.")})...),
		"ReservedIpHandler delete": doc("Delete a reserved IP (administrators)."),
	})
}

// reservedIPJSON is MAAS's DISPLAYED_RESERVEDIP_FIELDS.
type reservedIPJSON struct {
	ID          int64      `json:"id"`
	IP          string     `json:"ip"`
	Subnet      subnetJSON `json:"subnet"`
	MACAddress  string     `json:"mac_address"`
	Comment     string     `json:"comment"`
	ResourceURI string     `json:"resource_uri"`
}

func (v *netView) renderReservedIP(ri store.ReservedIP) reservedIPJSON {
	return reservedIPJSON{ID: ri.ID, IP: ri.IP, Subnet: v.renderSubnet(v.subnet(ri.SubnetID)), MACAddress: ri.MAC,
		Comment: ri.Comment, ResourceURI: Prefix + "reservedips/" + itoa(ri.ID) + "/"}
}

func (s *Server) reservedIPsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			rs, err := s.store.ListReservedIPs(r.Context())
			if err != nil {
				return err
			}
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			out := make([]reservedIPJSON, 0, len(rs))
			for _, ri := range rs {
				out = append(out, v.renderReservedIP(ri))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, s.createReservedIP),
	}
}

// createReservedIP checks the form as MAAS's ReservedIPForm does; that
// the address is free (or held by the same MAC) the store decides, under
// the subnet's lock.
func (s *Server) createReservedIP(w http.ResponseWriter, r *request) error {
	fe := fielderr.Errors{}
	ipText := strings.TrimSpace(r.form.Get("ip"))
	ip, err := netip.ParseAddr(ipText)
	switch {
	case ipText == "":
		fe.Add("ip", "This field is required.")
	case err != nil:
		fe.Add("ip", "Enter a valid IPv4 or IPv6 address.")
	}
	macText := strings.TrimSpace(r.form.Get("mac_address"))
	mac, err := net.ParseMAC(macText)
	switch {
	case macText == "":
		fe.Add("mac_address", "This field is required.")
	case err != nil || len(mac) != 6 || strings.Count(macText, ":")+strings.Count(macText, "-") != 5:
		fe.Add("mac_address", "'%s' is not a valid MAC address.", macText)
	}
	comment := r.form.Get("comment")
	if len(comment) > 255 {
		fe.Add("comment", "Ensure this value has at most 255 characters (it has %d).", len(comment))
	}
	if len(fe) > 0 {
		return fe
	}
	ip = ip.Unmap()
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	var sn network.Subnet
	if ref := strings.TrimSpace(r.form.Get("subnet")); ref != "" {
		st, err := s.subnetByRef(r, ref)
		if err != nil {
			return fielderr.Errors{"subnet": {"Select a valid choice. That choice is not one of the available choices."}}
		}
		sn, _ = n.Subnet(int(st.ID))
	} else {
		best := -1
		for _, c := range n.Subnets {
			if c.CIDR.Contains(ip) && c.CIDR.Bits() > best {
				sn, best = c, c.CIDR.Bits()
			}
		}
		if best < 0 {
			return fielderr.Errors{"subnet": {"There is no subnet for " + ip.String() + ". Create the subnet and try again."}}
		}
	}
	p := sn.CIDR.Masked()
	switch {
	case !p.Contains(ip):
		return fielderr.Errors{"ip": {ip.String() + " is not part of the subnet."}}
	case ip == p.Addr():
		return fielderr.Errors{"ip": {"The network address cannot be a reserved IP."}}
	case ip.Is4() && ip == broadcast4(p):
		return fielderr.Errors{"ip": {"The broadcast address cannot be a reserved IP."}}
	}
	for _, rg := range n.RangesOf(sn.ID) {
		if rg.Type == network.RangeDynamic && rg.Contains(ip) {
			return fielderr.Errors{"ip": {"The reserved IP " + ip.String() + " must be outside the dynamic range " +
				rg.Start.String() + " - " + rg.End.String() + "."}}
		}
	}
	ri, err := s.store.CreateReservedIP(r.Context(), store.ReservedIP{SubnetID: int64(sn.ID), IP: ip.String(), MAC: mac.String(), Comment: comment})
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		switch {
		case strings.HasPrefix(ce.What, "reserved ip"):
			return fielderr.Errors{"ip": {"Reserved IP with this IP address already exists."}}
		case strings.HasPrefix(ce.What, "mac_address"):
			return fielderr.Errors{"__all__": {"Reserved IP with this MAC address and Subnet already exists."}}
		}
		return fielderr.Errors{"ip": {"The ip " + ip.String() + " is already in use by another machine."}}
	}
	if err != nil {
		return err
	}
	s.svc.Hub.Notify()
	return s.writeReservedIP(w, r, ri)
}

func (s *Server) writeReservedIP(w http.ResponseWriter, r *request, ri store.ReservedIP) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderReservedIP(ri))
	return nil
}

func (s *Server) reservedIPRoutes() []route {
	byID := func(r *request) (store.ReservedIP, error) {
		id, err := pathID(r.id, "ReservedIP")
		if err != nil {
			return store.ReservedIP{}, err
		}
		ri, err := s.store.GetReservedIP(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			return ri, noSuch("ReservedIP")
		}
		return ri, err
	}
	return objectRoutes(s, byID, func(_ *request, v *netView, ri store.ReservedIP) any { return v.renderReservedIP(ri) },
		func(w http.ResponseWriter, r *request, ri store.ReservedIP) error {
			if !sameReservation(r, ri) {
				return fielderr.Errors{"__all__": {"The ip, mac_address and the subnet of a reserved IP are immutable. " +
					"Delete the entry and recreate it."}}
			}
			comment := ri.Comment
			if vals, ok := r.form["comment"]; ok {
				comment = first(vals)
			}
			if len(comment) > 255 {
				return fielderr.Errors{"comment": {sprintf("Ensure this value has at most 255 characters (it has %d).", len(comment))}}
			}
			ri, err := s.store.UpdateReservedIPComment(r.Context(), ri.ID, comment)
			if err != nil {
				return err
			}
			return s.writeReservedIP(w, r, ri)
		},
		func(r *request, ri store.ReservedIP) error { return s.store.DeleteReservedIP(r.Context(), ri.ID) })
}

// sameReservation reports whether the ip, mac_address and subnet a PUT
// names (those it names) are the reservation's own.
func sameReservation(r *request, ri store.ReservedIP) bool {
	if v, ok := r.form["ip"]; ok {
		if a, err := netip.ParseAddr(strings.TrimSpace(first(v))); err != nil || a.Unmap().String() != ri.IP {
			return false
		}
	}
	if v, ok := r.form["mac_address"]; ok {
		if m, err := net.ParseMAC(strings.TrimSpace(first(v))); err != nil || m.String() != ri.MAC {
			return false
		}
	}
	if v, ok := r.form["subnet"]; ok && strings.TrimSpace(first(v)) != itoa(ri.SubnetID) {
		return false
	}
	return true
}

// broadcast4 is an IPv4 prefix's last address.
func broadcast4(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	return netip.AddrFrom4(b)
}
