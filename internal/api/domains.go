package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/store"
)

func (st dnsState) renderDomain(d store.Domain) domainJSON {
	n := 0
	for _, r := range st.resources {
		if r.DomainID != d.ID {
			continue
		}
		n += len(r.IPs)
		for _, x := range st.data {
			if x.ResourceID == r.ID {
				n++
			}
		}
	}
	return domainJSON{ID: int(d.ID), Name: d.Name, TTL: d.TTL, Authoritative: d.Authoritative, ResourceRecordCount: n,
		IsDefault: d.Default, ResourceURI: Prefix + "domains/" + itoa(d.ID) + "/"}
}

func (s *Server) domainsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			out := make([]domainJSON, 0, len(st.domains))
			for _, d := range st.domains {
				out = append(out, st.renderDomain(d))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			d := store.Domain{Authoritative: true}
			if strings.TrimSpace(r.form.Get("name")) == "" {
				return badField("name", "This field is required.")
			}
			if err := applyDomainForm(r, &d); err != nil {
				return err
			}
			d, err := s.store.CreateDomain(r.Context(), d)
			if err != nil {
				return dnsConflict(err, "name", "Domain with this Name already exists.")
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, dnsState{}.renderDomain(d))
			return nil
		}),
		post("set_serial", adminOnly, func(w http.ResponseWriter, r *request) error {
			return badField("serial", "Anvil numbers its zones itself: the serial grows with every change.")
		}),
	}
}

// applyDomainForm validates and applies name, authoritative and ttl.
func applyDomainForm(r *request, d *store.Domain) error {
	if _, ok := r.form["name"]; ok {
		name := strings.TrimSuffix(strings.TrimSpace(r.form.Get("name")), ".")
		if err := dnszone.ValidDomainName(name); err != nil {
			return badField("name", "%v", err)
		}
		d.Name = strings.ToLower(name)
	}
	if _, ok := r.form["authoritative"]; ok {
		a, err := boolParam(r, "authoritative")
		if err != nil {
			return err
		}
		d.Authoritative = a
	}
	if ttl, ok, err := ttlParam(r, "ttl"); err != nil {
		return err
	} else if ok {
		d.TTL = ttl
	}
	if len(list(r, "forward_dns_servers")) > 0 {
		return badField("forward_dns_servers", "Forwarding a domain to other servers is not supported yet.")
	}
	return nil
}

func (s *Server) domainRoutes() []route {
	load := func(r *request) (dnsState, store.Domain, error) {
		return loadOne(s, r, "Domain", dnsState.domain)
	}
	return []route{
		readOne(load, dnsState.renderDomain),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			st, d, err := load(r)
			if err != nil {
				return err
			}
			old := d.Name
			if err := applyDomainForm(r, &d); err != nil {
				return err
			}
			if d.Name != old {
				// Machines name their domain by its name.
				if id, err := s.domainHasMachines(r, old); err != nil {
					return err
				} else if id != "" {
					return badField("name", "Machines are in domain %s (%s, ...): move them before renaming it.", old, id)
				}
			}
			if d, err = s.store.UpdateDomain(r.Context(), d); err != nil {
				return dnsConflict(err, "name", "Domain with this Name already exists.")
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderDomain(d))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			_, d, err := load(r)
			if err != nil {
				return err
			}
			if d.Default {
				return &badRequest{msg: "This domain is the default domain, it cannot be deleted."}
			}
			if err := s.store.DeleteDomain(r.Context(), d.ID); err != nil {
				if errors.Is(err, store.ErrInUse) {
					return &badRequest{msg: "Cannot delete domain " + d.Name + ": it still holds DNS resources or machines."}
				}
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
		post("set_default", adminOnly, func(w http.ResponseWriter, r *request) error {
			_, d, err := load(r)
			if err != nil {
				return err
			}
			if err := s.store.SetDefaultDomain(r.Context(), d.ID); err != nil {
				return err
			}
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			d, _ = st.domain(d.ID)
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderDomain(d))
			return nil
		}),
	}
}

func (s *Server) domainHasMachines(r *request, name string) (string, error) {
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{})
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if strings.EqualFold(m.Domain, name) {
			return m.SystemID, nil
		}
	}
	return "", nil
}
