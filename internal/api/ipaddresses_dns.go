package api

import (
	"context"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/store"
)

// A reservation made with a hostname names its address in DNS, as MAAS's
// ipaddresses/ op=reserve does: the DNS resource of that name (in the
// domain the hostname's tail names, or the default one) gets the address,
// and releasing the address takes it off again. Names belong to their
// owners (dnszone.MayAddAddress, dnszone.Unnames): a user's reservation
// makes a name of its own or adds to one, and never touches another's
// name, an administrator's, or a machine's or device's hostname.

// reservedName is where a reservation's hostname goes: its label and
// domain; ok is false for no hostname.
type reservedName struct {
	label  string
	domain store.Domain
	// domainOwn: the name answers for a domain (dnszone.DomainOwn).
	domainOwn bool
}

// actor is who a request is, for the DNS ownership rules.
func (r *request) actor() dnszone.Actor {
	return dnszone.Actor{User: r.who.user.Name, Admin: r.who.user.Admin}
}

// parseReservedName checks a reservation's hostname before anything is
// stored: MAAS takes the part after the first dot as a domain name that
// must exist. Whether the name may take the address is decided again as
// it is stored (nameReservation); this early look spares a reservation
// that would be undone.
func (s *Server) parseReservedName(r *request, hostname string) (reservedName, bool, error) {
	if hostname == "" {
		return reservedName{}, false, nil
	}
	st, err := s.loadDNS(r.Context())
	if err != nil {
		return reservedName{}, false, err
	}
	n := reservedName{label: hostname, domain: st.defaultDomain()}
	if label, dom, ok := strings.Cut(hostname, "."); ok && label != "" {
		i := slices.IndexFunc(st.domains, func(d store.Domain) bool { return strings.EqualFold(d.Name, dom) })
		if i < 0 {
			return n, false, noSuch("Domain")
		}
		n.label, n.domain = label, st.domains[i]
	}
	if err := dnszone.ValidResourceName(n.label, "A"); err != nil {
		return n, false, badField("hostname", "%v", err)
	}
	var names []string
	for _, d := range st.domains {
		names = append(names, d.Name)
	}
	n.domainOwn = dnszone.DomainOwn(n.label, n.domain.Name, names)
	res, ok := st.resourceNamed(n.domain.ID, n.label)
	if !ok {
		res = store.DNSResource{Name: n.label, DomainID: n.domain.ID, Owner: dnszone.OwnerFor(r.actor())}
	}
	var held []store.DNSData
	for _, d := range st.data {
		if ok && d.ResourceID == res.ID {
			held = append(held, d)
		}
	}
	return n, true, s.mayName(r, n, res, held)
}

// mayName is the rule for putting a reservation's address on the name n,
// which is res holding the records held: the name must be new or the
// caller's, no machine's or device's hostname, and hold no CNAME.
func (s *Server) mayName(r *request, n reservedName, res store.DNSResource, held []store.DNSData) error {
	node, err := s.nodeNamed(r.Context(), n.label, n.domain.Name)
	if err != nil {
		return err
	}
	claim := dnszone.Name{Resource: res.ID != 0, Owner: res.Owner, Node: node, DomainOwn: n.domainOwn}
	if err := dnszone.MayAddAddress(r.actor(), claim); err != nil {
		return badField("hostname", "%v", err)
	}
	if err := addressBeside(held); err != nil {
		return badField("hostname", "%v", err)
	}
	return nil
}

// nameReservation adds ip to the DNS resource n, making it (the caller's,
// or administrators') if it is new; the rule is checked under the name's
// lock, so a name changing hands meanwhile is seen.
func (s *Server) nameReservation(r *request, n reservedName, ip string) error {
	res := store.DNSResource{Name: n.label, DomainID: n.domain.ID, Owner: dnszone.OwnerFor(r.actor())}
	_, err := s.store.NameAddress(r.Context(), res, ip, func(cur store.DNSResource, held []store.DNSData) error {
		return s.mayName(r, n, cur, held)
	})
	if err == nil {
		s.svc.Hub.Notify()
	}
	return err
}

// unnameAddress takes ip off the DNS names the releaser may take it
// from (its own; an administrator's release, every name), deleting a name
// left with neither addresses nor records.
func (s *Server) unnameAddress(r *request, ip string) error {
	a := r.actor()
	if err := s.store.UnnameAddress(r.Context(), ip, func(owner string) bool { return dnszone.Unnames(a, owner) }); err != nil {
		return err
	}
	s.svc.Hub.Notify()
	return nil
}

// nodeNamed is the system_id of the machine or device named hostname in
// the domain, "" for none: its name holds its interfaces' addresses.
func (s *Server) nodeNamed(ctx context.Context, hostname, domain string) (string, error) {
	if id, err := s.machineNamed(ctx, hostname, domain); err != nil || id != "" {
		return id, err
	}
	ds, err := s.store.ListDevices(ctx, store.DeviceFilter{Hostnames: []string{strings.ToLower(hostname)}})
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if inDomain(d.Domain, domain) {
			return d.SystemID, nil
		}
	}
	return "", nil
}

// mayNameNode refuses a machine's or device's hostname where a DNS name
// someone else holds already answers in that domain ("" the default):
// the node's addresses would answer for that name too.
func (s *Server) mayNameNode(r *request, hostname, domain string) error {
	if hostname == "" {
		return nil
	}
	st, err := s.loadDNS(r.Context())
	if err != nil {
		return err
	}
	dom := st.defaultDomain()
	if domain != "" {
		if dom, err = st.domainNamed(domain); err != nil {
			return nil // no such domain: nothing in it to collide with
		}
	}
	res, ok := st.resourceNamed(dom.ID, hostname)
	if err := dnszone.MayNameNode(r.actor(), dnszone.Name{Resource: ok, Owner: res.Owner}); err != nil {
		return badField("hostname", "%v", err)
	}
	return nil
}

// mayDeployAs checks a hostname given with op=deploy against the DNS
// names of the machine's domain.
func (s *Server) mayDeployAs(r *request, hostname string) error {
	if hostname == "" {
		return nil
	}
	m, err := s.store.GetMachine(r.Context(), r.id)
	if err != nil {
		return nil // the action itself says the machine is not there
	}
	return s.mayNameNode(r, hostname, m.Domain)
}
