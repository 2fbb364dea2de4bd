package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// Zones and resource pools are the same shape (a name and a description)
// with the same rules, so one set of handlers serves both through groupOps.

type group struct {
	ID          int64
	Name        string
	Description string
}

type groupOps struct {
	list   func(context.Context) ([]group, error)
	get    func(context.Context, string) (group, error)
	create func(context.Context, group) (group, error)
	update func(context.Context, string, group) (group, error)
	delete func(context.Context, string) error
	render func(group) any
	// check validates extra fields before anything is written; after
	// applies them once the create or update is done.
	check func(r *request) error
	after func(r *request, name string) error
}

// groupKind is store.Zone or store.Pool: the same shape under two names.
type groupKind interface {
	~struct {
		ID                int64
		Name, Description string
	}
}

// adapt turns one kind's store methods into groupOps, converting between
// the kind and group at the edges.
func adapt[T groupKind](list func(context.Context) ([]T, error), get func(context.Context, string) (T, error),
	create func(context.Context, T) (T, error), update func(context.Context, string, T) (T, error),
	remove func(context.Context, string) error, render func(T) any) groupOps {
	return groupOps{
		list: func(ctx context.Context) ([]group, error) {
			ts, err := list(ctx)
			out := make([]group, len(ts))
			for i, t := range ts {
				out[i] = group(t)
			}
			return out, err
		},
		get:    func(ctx context.Context, n string) (group, error) { t, err := get(ctx, n); return group(t), err },
		create: func(ctx context.Context, g group) (group, error) { t, err := create(ctx, T(g)); return group(t), err },
		update: func(ctx context.Context, n string, g group) (group, error) {
			t, err := update(ctx, n, T(g))
			return group(t), err
		},
		delete: remove,
		render: func(g group) any { return render(T(g)) },
	}
}

func (s *Server) zoneOps() groupOps {
	st := s.store
	return adapt(st.ListZones, st.GetZone, st.CreateZone, st.UpdateZone, st.DeleteZone,
		func(z store.Zone) any { return renderZone(z) })
}

func (s *Server) poolOps() groupOps {
	st := s.store
	ops := adapt(st.ListPools, st.GetPool, st.CreatePool, st.UpdatePool, st.DeletePool,
		func(p store.Pool) any { return renderPool(p) })
	ops.check = func(r *request) error {
		if v, ok := r.form["drift_policy"]; ok {
			if _, err := machine.ParseDriftPolicy(v[0]); err != nil {
				return badField("drift_policy", "%v", err)
			}
		}
		return nil
	}
	ops.after = s.setPoolPolicy
	return ops
}

func (s *Server) zonesRoutes() []route { return groupCollection(s.zoneOps()) }
func (s *Server) zoneRoutes() []route  { return groupItem(s.zoneOps()) }
func (s *Server) poolsRoutes() []route { return groupCollection(s.poolOps()) }
func (s *Server) poolRoutes() []route  { return groupItem(s.poolOps()) }

// setPoolPolicy applies a drift_policy field, when given, to a pool.
func (s *Server) setPoolPolicy(r *request, pool string) error {
	v, ok := r.form["drift_policy"]
	if !ok {
		return nil
	}
	p, err := machine.ParseDriftPolicy(v[0])
	if err != nil {
		return badField("drift_policy", "%v", err)
	}
	return s.store.SetPoolDriftPolicy(r.Context(), pool, string(p))
}

func groupCollection(ops groupOps) []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			gs, err := ops.list(r.Context())
			if err != nil {
				return err
			}
			out := make([]any, len(gs))
			for i, g := range gs {
				out[i] = ops.render(g)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			name, err := groupName(r, true)
			if err != nil {
				return err
			}
			if ops.check != nil {
				if err := ops.check(r); err != nil {
					return err
				}
			}
			g, err := ops.create(r.Context(), group{Name: name, Description: r.form.Get("description")})
			if err != nil {
				return err
			}
			if ops.after != nil {
				if err := ops.after(r, g.Name); err != nil {
					return err
				}
			}
			writeJSON(w, http.StatusOK, ops.render(g))
			return nil
		}),
	}
}

// byRef finds a group by name or by MAAS's numeric id (pools are addressed
// by id in MAAS's URLs, zones by name).
func (ops groupOps) byRef(r *request) (group, error) {
	g, err := ops.get(r.Context(), r.id)
	if err == nil {
		return g, nil
	}
	if id, perr := strconv.ParseInt(r.id, 10, 64); perr == nil {
		gs, lerr := ops.list(r.Context())
		if lerr != nil {
			return group{}, lerr
		}
		for _, g := range gs {
			if g.ID == id {
				return g, nil
			}
		}
	}
	return group{}, err
}

func groupItem(ops groupOps) []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			g, err := ops.byRef(r)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, ops.render(g))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			old, err := ops.byRef(r)
			if err != nil {
				return err
			}
			name, err := groupName(r, false)
			if err != nil {
				return err
			}
			if ops.check != nil {
				if err := ops.check(r); err != nil {
					return err
				}
			}
			upd := group{Name: firstOr(name, old.Name), Description: old.Description}
			if _, ok := r.form["description"]; ok {
				upd.Description = r.form.Get("description")
			}
			g, err := ops.update(r.Context(), old.Name, upd)
			if err != nil {
				return err
			}
			if ops.after != nil {
				if err := ops.after(r, g.Name); err != nil {
					return err
				}
			}
			writeJSON(w, http.StatusOK, ops.render(g))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			g, err := ops.byRef(r)
			if err != nil {
				return err
			}
			if err := ops.delete(r.Context(), g.Name); err != nil {
				return err
			}
			writeNoContent(w)
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
