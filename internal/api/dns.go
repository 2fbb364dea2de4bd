package api

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/store"
)

// dnsState is the DNS model, read whole: domains, resources and records
// are small tables, and each answer needs their relations.
type dnsState struct {
	domains   []store.Domain
	resources []store.DNSResource
	data      []store.DNSData
}

func (s *Server) loadDNS(ctx context.Context) (dnsState, error) {
	var st dnsState
	var err error
	if st.domains, err = s.store.ListDomains(ctx); err != nil {
		return st, err
	}
	if st.resources, err = s.store.ListDNSResources(ctx); err != nil {
		return st, err
	}
	st.data, err = s.store.ListDNSData(ctx)
	return st, err
}

func (st dnsState) domain(id int64) (store.Domain, bool) {
	for _, d := range st.domains {
		if d.ID == id {
			return d, true
		}
	}
	return store.Domain{}, false
}

// domainByRef finds a domain by id or name, as MAAS's domain parameter.
func (st dnsState) domainByRef(ref string) (store.Domain, bool) {
	ref = strings.TrimSuffix(strings.TrimSpace(ref), ".")
	for _, d := range st.domains {
		if strconv.FormatInt(d.ID, 10) == ref || strings.EqualFold(d.Name, ref) {
			return d, true
		}
	}
	return store.Domain{}, false
}

func (st dnsState) resource(id int64) (store.DNSResource, bool) {
	for _, r := range st.resources {
		if r.ID == id {
			return r, true
		}
	}
	return store.DNSResource{}, false
}

func (st dnsState) resourceNamed(domainID int64, name string) (store.DNSResource, bool) {
	for _, r := range st.resources {
		if r.DomainID == domainID && strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return store.DNSResource{}, false
}

func (st dnsState) fqdn(r store.DNSResource) string {
	d, _ := st.domain(r.DomainID)
	if r.Name == "@" || r.Name == "" {
		return d.Name
	}
	return r.Name + "." + d.Name
}

// splitFQDN finds the domain an fqdn falls in (the longest one that ends
// it) and the name left of it.
func (st dnsState) splitFQDN(fqdn string) (string, store.Domain, bool) {
	fqdn = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(fqdn), "."))
	var best store.Domain
	found := false
	for _, d := range st.domains {
		n := strings.ToLower(d.Name)
		if (fqdn == n || strings.HasSuffix(fqdn, "."+n)) && len(n) >= len(best.Name) {
			best, found = d, true
		}
	}
	if !found {
		return "", best, false
	}
	name := strings.TrimSuffix(strings.TrimSuffix(fqdn, strings.ToLower(best.Name)), ".")
	if name == "" {
		name = "@"
	}
	return name, best, true
}

// nameAndDomain reads fqdn, or name and domain, as MAAS's DNS handlers do.
func (st dnsState) nameAndDomain(r *request, def store.Domain) (string, store.Domain, error) {
	if f := r.form.Get("fqdn"); f != "" {
		name, d, ok := st.splitFQDN(f)
		if !ok {
			return "", d, badField("fqdn", "No domain holds %s.", f)
		}
		return name, d, nil
	}
	name := strings.TrimSpace(r.form.Get("name"))
	if name == "" {
		return "", def, badField("name", "This field is required.")
	}
	d := def
	if ref := r.form.Get("domain"); ref != "" {
		var ok bool
		if d, ok = st.domainByRef(ref); !ok {
			return "", d, badField("domain", "Select a valid choice. That choice is not one of the available choices.")
		}
	}
	return name, d, nil
}

func (st dnsState) defaultDomain() store.Domain {
	for _, d := range st.domains {
		if d.Default {
			return d
		}
	}
	return store.Domain{Name: dnszone.DefaultDomain}
}

// ttlParam reads an optional TTL: absent or empty is nil.
func ttlParam(r *request, name string) (*int, bool, error) {
	v, ok := r.form[name]
	if !ok {
		return nil, false, nil
	}
	s := strings.TrimSpace(first(v))
	if s == "" {
		return nil, true, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, true, badField(name, "Enter a whole number.")
	}
	if err := dnszone.ValidTTL(n); err != nil {
		return nil, true, badField(name, "%v", err)
	}
	return &n, true, nil
}

// machineNamed says whether a machine holds hostname in the domain: its
// name resolves to its addresses, so no CNAME and no other addresses may
// share it.
func (s *Server) machineNamed(ctx context.Context, hostname, domain string) (string, error) {
	if hostname == "@" {
		return "", nil
	}
	ms, err := s.store.ListMachines(ctx, store.MachineFilter{Hostnames: []string{strings.ToLower(hostname)}})
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if inDomain(m.Domain, domain) {
			return m.SystemID, nil
		}
	}
	return "", nil
}

// inDomain says whether a node's domain ("" the default) is domain.
func inDomain(nodeDomain, domain string) bool {
	return strings.EqualFold(nodeDomain, domain) || nodeDomain == "" && strings.EqualFold(domain, dnszone.DefaultDomain)
}

func parseIPs(r *request) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(strings.Join(r.form["ip_addresses"], " "), func(c rune) bool { return c == ' ' || c == ',' }) {
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, badField("ip_addresses", "%s is not an IP address.", f)
		}
		out = append(out, a.Unmap().String())
	}
	return out, nil
}

func parseID(r *request, model string) (int64, error) {
	id, err := strconv.ParseInt(r.id, 10, 64)
	if err != nil {
		return 0, noSuch(model)
	}
	return id, nil
}

func dnsConflict(err error, field, msg string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField(field, "%s", msg)
	}
	return err
}

func (st dnsState) record(id int64) (store.DNSData, bool) {
	for _, d := range st.data {
		if d.ID == id {
			return d, true
		}
	}
	return store.DNSData{}, false
}

// loadOne reads the DNS model and the object the path names.
func loadOne[T any](s *Server, r *request, model string, find func(dnsState, int64) (T, bool)) (dnsState, T, error) {
	var zero T
	st, err := s.loadDNS(r.Context())
	if err != nil {
		return st, zero, err
	}
	id, err := parseID(r, model)
	if err != nil {
		return st, zero, err
	}
	v, ok := find(st, id)
	if !ok {
		return st, zero, noSuch(model)
	}
	return st, v, nil
}

// readOne is the GET of one DNS object.
func readOne[T, J any](load func(*request) (dnsState, T, error), render func(dnsState, T) J) route {
	return get("", authenticated, func(w http.ResponseWriter, r *request) error {
		st, v, err := load(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, render(st, v))
		return nil
	})
}

// domainNamed finds a domain by its name alone.
func (st dnsState) domainNamed(name string) (store.Domain, error) {
	name = strings.TrimSuffix(strings.TrimSpace(name), ".")
	for _, d := range st.domains {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
	}
	return store.Domain{}, noSuch("Domain")
}
