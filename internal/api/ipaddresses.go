package api

import (
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// ipaddresses/: addresses users reserve, as MAAS's IPAddressesHandler.
// A reservation is an ip_addresses row of type USER_RESERVED with no
// interface; AUTO addresses come from the same table, so a reservation
// and an allocation can never share an address.

func init() {
	addDocs(map[string]string{
		"IPAddressesHandler": "IP addresses users reserve, and (for administrators) every address assigned.",
		"IPAddressesHandler read": doc("List your reserved addresses.", with("", []string{
			opt("all", "boolean", "Every assigned address, of any type (administrators)."),
			opt("owner", "string", "Only this user's (administrators)."),
			opt("ip", "string", "Only this address.")})...),
		"IPAddressesHandler reserve": doc("Reserve an address: the one given, or the next free one of the subnet.", with("", []string{
			opt("subnet", "string", "The subnet's id, name or CIDR."),
			opt("ip", "string", "The address (its subnet is the one holding it)."),
			opt("ip_address", "string", "The address, as older clients name it."),
			opt("hostname", "string", "A host name to record with it."),
			opt("mac", "string", "A MAC address to record with it; needed to reserve an address in a dynamic range.")})...),
		"IPAddressesHandler release": doc("Release a reserved address.", with("", []string{
			req("ip", "string", "The address."),
			opt("force", "boolean", "Release any address but a discovered one, whoever holds it (administrators)."),
			opt("discovered", "boolean", "With force, release a discovered address.")})...),
	})
}

// ipAddressJSON is MAAS's StaticIPAddress as IPAddressesHandler shows it.
type ipAddressJSON struct {
	AllocType     int        `json:"alloc_type"`
	AllocTypeName string     `json:"alloc_type_name"`
	Created       string     `json:"created"`
	IP            string     `json:"ip"`
	Owner         *userJSON  `json:"owner"`
	InterfaceSet  []any      `json:"interface_set"`
	Subnet        subnetJSON `json:"subnet"`
	ResourceURI   string     `json:"resource_uri"`
}

func (s *Server) renderIP(r *request, v *netView, a store.IPAddress) ipAddressJSON {
	j := ipAddressJSON{AllocType: a.AllocType, AllocTypeName: allocTypeName(a.AllocType), Created: a.Created.UTC().Format(time.RFC3339),
		IP: a.IP, InterfaceSet: []any{}, Subnet: v.renderSubnet(v.subnet(a.SubnetID)), ResourceURI: Prefix + "ipaddresses/"}
	if a.Owner != "" {
		if u, err := s.store.GetUser(r.Context(), a.Owner); err == nil {
			uj := renderUser(u)
			j.Owner = &uj
		}
	}
	return j
}

func (s *Server) ipAddressesRoutes() []route {
	return []route{
		get("", authenticated, s.listIPAddresses),
		post("reserve", authenticated, s.reserveIP),
		post("release", authenticated, s.releaseIP),
	}
}

func (s *Server) listIPAddresses(w http.ResponseWriter, r *request) error {
	all, err := boolParam(r, "all")
	if err != nil {
		return err
	}
	owner, ip := r.form.Get("owner"), strings.TrimSpace(r.form.Get("ip"))
	if ip != "" {
		if _, err := netip.ParseAddr(ip); err != nil {
			return &badRequest{"Parameter 'ip' must contain an IP address."}
		}
	}
	admin := r.who.user.Admin
	switch {
	case all && !admin:
		return &statusError{http.StatusForbidden, "Listing all IP addresses requires admin privileges."}
	case owner != "" && !admin:
		return &statusError{http.StatusForbidden, "Listing another user's IP addresses requires admin privileges."}
	case owner == "" && !all:
		owner = r.who.user.Name
	}
	rows, err := s.store.ListIPAddresses(r.Context(), store.IPAddressFilter{Owner: owner})
	if err != nil {
		return err
	}
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	out := []ipAddressJSON{}
	for _, a := range rows {
		if a.IP == "" || (!all && a.AllocType != store.AllocUserReserved) || (ip != "" && a.IP != ip) {
			continue
		}
		out = append(out, s.renderIP(r, v, a))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) reserveIP(w http.ResponseWriter, r *request) error {
	ipRef := strings.TrimSpace(firstOr(r.form.Get("ip"), r.form.Get("ip_address")))
	subnetRef := strings.TrimSpace(r.form.Get("subnet"))
	mac := strings.TrimSpace(r.form.Get("mac"))
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	var sn store.Subnet
	var ip netip.Addr
	switch {
	case ipRef != "":
		if ip, err = netip.ParseAddr(ipRef); err != nil {
			return badField("ip_address", "Enter a valid IPv4 or IPv6 address.")
		}
		found := false
		for _, c := range v.subnets {
			if p, err := netip.ParsePrefix(c.CIDR); err == nil && p.Contains(ip) {
				sn, found = c, true
			}
		}
		if !found {
			return &badRequest{"No known subnet for IP address: " + ip.String() + "."}
		}
	case subnetRef != "":
		if sn, err = s.subnetByRef(r, subnetRef); err != nil {
			return &badRequest{"Unable to identify subnet: " + subnetRef + "."}
		}
	default:
		return &badRequest{"Must supply either the 'subnet' or the 'ip' parameter."}
	}
	a := store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocUserReserved, Owner: r.who.user.Name,
		Hostname: strings.TrimSpace(r.form.Get("hostname")), MAC: mac}
	dnsName, named, err := s.parseReservedName(r, a.Hostname)
	if err != nil {
		return err
	}
	if !ip.IsValid() {
		a, err = s.store.AllocateIP(r.Context(), a)
		if err != nil {
			return &statusError{http.StatusServiceUnavailable, "No more IPs available in subnet: " + sn.CIDR + "."}
		}
		return s.writeReservation(w, r, a, dnsName, named)
	}
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	for _, rg := range n.RangesOf(int(sn.ID)) {
		if rg.Type == network.RangeDynamic && rg.Contains(ip) && mac == "" {
			return &statusError{http.StatusForbidden, "IP address " + ip.String() + " belongs to an existing dynamic range. " +
				"To reserve this IP address, a MAC address is required. (Create a device instead.)"}
		}
	}
	// The address rules of a STATIC link, the dynamic range aside when a
	// MAC was given; whether it is free is for the unique index to say.
	link := network.Link{Mode: network.LinkStatic, SubnetID: int(sn.ID), IP: ip}
	if fe := network.ValidateLink(n, network.Interface{VLANID: int(sn.VLANID)}, link, nil); len(fe) > 0 && mac == "" {
		return fe
	}
	if held, err := s.store.RackAddresses(r.Context()); err != nil {
		return err
	} else if held[ip] {
		return &statusError{http.StatusNotFound, "The IP address " + ip.String() + " is already in use."}
	}
	a.IP = ip.String()
	a, err = s.store.CreateIPAddress(r.Context(), a)
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return &statusError{http.StatusNotFound, "The IP address " + ip.String() + " is already in use."}
	}
	if err != nil {
		return err
	}
	return s.writeReservation(w, r, a, dnsName, named)
}

// writeReservation names the new reservation in DNS when it came with a
// hostname, and answers it; if naming fails, the reservation is undone.
func (s *Server) writeReservation(w http.ResponseWriter, r *request, a store.IPAddress, n reservedName, named bool) error {
	if named {
		if err := s.nameReservation(r, n, a.IP); err != nil {
			if derr := s.store.DeleteIPAddress(r.Context(), a.ID); derr != nil {
				s.log.Error("undo reservation", "ip", a.IP, "err", derr)
			}
			return dnsConflict(err, "hostname", dnszone.MsgLabelInUse)
		}
	}
	return s.writeIP(w, r, a)
}

func (s *Server) writeIP(w http.ResponseWriter, r *request, a store.IPAddress) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.renderIP(r, v, a))
	return nil
}

func (s *Server) releaseIP(w http.ResponseWriter, r *request) error {
	ip := strings.TrimSpace(r.form.Get("ip"))
	if ip == "" {
		return badField("ip", "This field is required.")
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		return badField("ip", "Enter a valid IPv4 or IPv6 address.")
	}
	force, err := boolParam(r, "force")
	if err != nil {
		return err
	}
	discovered, err := boolParam(r, "discovered")
	if err != nil {
		return err
	}
	if force && !r.who.user.Admin {
		return &statusError{http.StatusForbidden, "Force-releasing an IP address requires admin privileges."}
	}
	rows, err := s.store.ListIPAddresses(r.Context(), store.IPAddressFilter{})
	if err != nil {
		return err
	}
	for _, a := range rows {
		match := a.IP == ip && a.AllocType == store.AllocUserReserved && a.Owner == r.who.user.Name
		if force {
			match = a.IP == ip && (a.AllocType == store.AllocDiscovered) == discovered
		}
		if match {
			if err := s.store.DeleteIPAddress(r.Context(), a.ID); err != nil {
				return err
			}
			if err := s.unnameAddress(r, a.IP); err != nil {
				return err
			}
			writeNoContent(w)
			return nil
		}
	}
	if force {
		return &badRequest{"IP address " + ip + " does not exist."}
	}
	return &badRequest{"IP address " + ip + " does not exist, is not the correct type of address, or does not belong to the requesting user.\n" +
		"If you are sure you want to release this address, use force=true as a MAAS administrator."}
}
