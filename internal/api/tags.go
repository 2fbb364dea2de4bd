package api

import (
	"net/http"

	"github.com/anvilmetal/anvil/internal/store"
)

type tagJSON struct {
	Name        string `json:"name"`
	Comment     string `json:"comment"`
	Definition  string `json:"definition"`
	KernelOpts  string `json:"kernel_opts"`
	ResourceURI string `json:"resource_uri"`
}

func renderTag(t store.Tag) tagJSON {
	return tagJSON{Name: t.Name, Comment: t.Comment, Definition: t.Definition, KernelOpts: t.KernelOpts, ResourceURI: Prefix + "tags/" + t.Name + "/"}
}

func (s *Server) tagsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			ts, err := s.store.ListTags(r.Context())
			if err != nil {
				return err
			}
			out := make([]tagJSON, 0, len(ts))
			for _, t := range ts {
				out = append(out, renderTag(t))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			if r.form.Get("definition") != "" {
				return badField("definition", "tags defined by an XPath over hardware details are not supported yet; create a manual tag and add machines with op=update_nodes")
			}
			t, err := s.store.CreateTag(r.Context(), store.Tag{
				Name: r.form.Get("name"), Comment: r.form.Get("comment"), KernelOpts: r.form.Get("kernel_opts"),
			})
			if err != nil {
				return tagError(err)
			}
			writeJSON(w, http.StatusOK, renderTag(t))
			return nil
		}),
	}
}

func (s *Server) tagRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			t, err := s.store.GetTag(r.Context(), r.id)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, renderTag(t))
			return nil
		}),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			old, err := s.store.GetTag(r.Context(), r.id)
			if err != nil {
				return err
			}
			upd := old
			if v := r.form.Get("name"); v != "" {
				upd.Name = v
			}
			for field, dst := range map[string]*string{"comment": &upd.Comment, "kernel_opts": &upd.KernelOpts} {
				if _, ok := r.form[field]; ok {
					*dst = r.form.Get(field)
				}
			}
			t, err := s.store.UpdateTag(r.Context(), r.id, upd)
			if err != nil {
				return tagError(err)
			}
			writeJSON(w, http.StatusOK, renderTag(t))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			if err := s.store.DeleteTag(r.Context(), r.id); err != nil {
				return err
			}
			writeNoContent(w)
			return nil
		}),
		get("machines", authenticated, func(w http.ResponseWriter, r *request) error {
			if _, err := s.store.GetTag(r.Context(), r.id); err != nil {
				return err
			}
			f := store.MachineFilter{Tags: []string{r.id}}
			if !r.who.user.Admin {
				f.VisibleTo = r.who.user.Name
			}
			ms, err := s.store.ListMachines(r.Context(), f)
			if err != nil {
				return err
			}
			n, err := s.loadNames(r)
			if err != nil {
				return err
			}
			out := make([]machineJSON, len(ms))
			for i := range ms {
				out[i] = renderMachine(&ms[i], n, false)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		// update_nodes adds and removes machines in one transaction and
		// answers with the counts, as MAAS does.
		post("update_nodes", adminOnly, func(w http.ResponseWriter, r *request) error {
			add, remove := list(r, "add"), list(r, "remove")
			if len(add)+len(remove) == 0 {
				return badField("add", "give system_ids to add or remove")
			}
			if err := s.store.TagMachines(r.Context(), r.id, add, remove); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, map[string]int{"added": len(add), "removed": len(remove)})
			return nil
		}),
	}
}

// tagError turns the store's plain validation error for a bad name into a
// field error; conflicts and the rest pass through.
func tagError(err error) error {
	if isStoreSentinel(err) {
		return err
	}
	return badField("name", "%v", err)
}
