package api

import (
	"net/http"
	"strconv"

	"github.com/anvilmetal/anvil/internal/store"
)

// Zones and resource pools are the same shape: a name and a description.

func (s *Server) zonesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			zs, err := s.store.ListZones(r.Context())
			if err != nil {
				return err
			}
			out := make([]zoneJSON, 0, len(zs))
			for _, z := range zs {
				out = append(out, renderZone(z))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			name, err := groupName(r, true)
			if err != nil {
				return err
			}
			z, err := s.store.CreateZone(r.Context(), store.Zone{Name: name, Description: r.form.Get("description")})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderZone(z))
			return nil
		}),
	}
}

func (s *Server) zoneRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			z, err := s.store.GetZone(r.Context(), r.id)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderZone(z))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			old, err := s.store.GetZone(r.Context(), r.id)
			if err != nil {
				return err
			}
			name, err := groupName(r, false)
			if err != nil {
				return err
			}
			upd := store.Zone{Name: firstOr(name, old.Name), Description: old.Description}
			if _, ok := r.form["description"]; ok {
				upd.Description = r.form.Get("description")
			}
			z, err := s.store.UpdateZone(r.Context(), r.id, upd)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderZone(z))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			if err := s.store.DeleteZone(r.Context(), r.id); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}),
	}
}

func (s *Server) poolsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			ps, err := s.store.ListPools(r.Context())
			if err != nil {
				return err
			}
			out := make([]poolJSON, 0, len(ps))
			for _, p := range ps {
				out = append(out, renderPool(p))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			name, err := groupName(r, true)
			if err != nil {
				return err
			}
			p, err := s.store.CreatePool(r.Context(), store.Pool{Name: name, Description: r.form.Get("description")})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderPool(p))
			return nil
		}),
	}
}

// poolByRef finds a pool by MAAS's numeric id or by name.
func (s *Server) poolByRef(r *request) (store.Pool, error) {
	if id, err := strconv.ParseInt(r.id, 10, 64); err == nil {
		ps, err := s.store.ListPools(r.Context())
		if err != nil {
			return store.Pool{}, err
		}
		for _, p := range ps {
			if p.ID == id {
				return p, nil
			}
		}
	}
	return s.store.GetPool(r.Context(), r.id)
}

func (s *Server) poolRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			p, err := s.poolByRef(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderPool(p))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			old, err := s.poolByRef(r)
			if err != nil {
				return err
			}
			name, err := groupName(r, false)
			if err != nil {
				return err
			}
			upd := store.Pool{Name: firstOr(name, old.Name), Description: old.Description}
			if _, ok := r.form["description"]; ok {
				upd.Description = r.form.Get("description")
			}
			p, err := s.store.UpdatePool(r.Context(), old.Name, upd)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderPool(p))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			p, err := s.poolByRef(r)
			if err != nil {
				return err
			}
			if err := s.store.DeletePool(r.Context(), p.Name); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		}),
	}
}

// groupName validates a zone or pool name: the characters MAAS allows.
func groupName(r *request, required bool) (string, error) {
	n := r.form.Get("name")
	if n == "" {
		if required {
			return "", badField("name", "a name is required")
		}
		return "", nil
	}
	if len(n) > 256 || !validName(n) {
		return "", badField("name", "%q: use letters, digits and @.+-_ only (at most 256)", truncate(n, 40))
	}
	return n, nil
}
