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
// and releasing the address takes it off again.

// reservedName is where a reservation's hostname goes: its label and
// domain; ok is false for no hostname.
type reservedName struct {
	label  string
	domain store.Domain
}

// parseReservedName checks a reservation's hostname before anything is
// stored: MAAS takes the part after the first dot as a domain name that
// must exist.
func (s *Server) parseReservedName(ctx context.Context, hostname string) (reservedName, bool, error) {
	if hostname == "" {
		return reservedName{}, false, nil
	}
	st, err := s.loadDNS(ctx)
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
	if res, ok := st.resourceNamed(n.domain.ID, n.label); ok {
		var types []string
		for _, d := range st.data {
			if d.ResourceID == res.ID {
				types = append(types, d.Type)
			}
		}
		if err := dnszone.CheckAdd(dnszone.Existing{Types: types}, "A"); err != nil {
			return n, false, badField("hostname", "%v", err)
		}
	}
	return n, true, nil
}

// nameReservation adds ip to the DNS resource n, making it if it is new.
func (s *Server) nameReservation(ctx context.Context, n reservedName, ip string) error {
	st, err := s.loadDNS(ctx)
	if err != nil {
		return err
	}
	if res, ok := st.resourceNamed(n.domain.ID, n.label); ok {
		if slices.Contains(res.IPs, ip) {
			return nil
		}
		res.IPs = append(res.IPs, ip)
		_, err = s.store.UpdateDNSResource(ctx, res, addressesBeside)
	} else {
		_, err = s.store.CreateDNSResource(ctx, store.DNSResource{Name: n.label, DomainID: n.domain.ID, IPs: []string{ip}})
	}
	if err == nil {
		s.svc.Hub.Notify()
	}
	return err
}

// unnameAddress takes ip off every DNS resource that lists it, deleting
// a resource left with neither addresses nor records.
func (s *Server) unnameAddress(ctx context.Context, ip string) error {
	st, err := s.loadDNS(ctx)
	if err != nil {
		return err
	}
	for _, res := range st.resources {
		if !slices.Contains(res.IPs, ip) {
			continue
		}
		res.IPs = slices.DeleteFunc(res.IPs, func(a string) bool { return a == ip })
		if len(res.IPs) == 0 && !slices.ContainsFunc(st.data, func(d store.DNSData) bool { return d.ResourceID == res.ID }) {
			err = s.store.DeleteDNSResource(ctx, res.ID)
		} else {
			_, err = s.store.UpdateDNSResource(ctx, res, addressesBeside)
		}
		if err != nil {
			return err
		}
	}
	s.svc.Hub.Notify()
	return nil
}
