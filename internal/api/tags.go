package api

import (
	"errors"
	"github.com/anvilmetal/anvil/internal/boot/bootcfg"
	"net/http"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/hwtags"
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
			def := strings.TrimSpace(r.form.Get("definition"))
			if def != "" {
				if err := hwtags.Check(def); err != nil {
					return badField("definition", "%v", err)
				}
			}
			if err := bootcfg.CheckKernelOpts(r.form.Get("kernel_opts")); err != nil {
				return badField("kernel_opts", "%v", err)
			}
			t, err := s.store.CreateTag(r.Context(), store.Tag{
				Name: r.form.Get("name"), Comment: r.form.Get("comment"), Definition: def, KernelOpts: r.form.Get("kernel_opts"),
			})
			if err != nil {
				return tagError(err)
			}
			if _, _, err := s.svc.RebuildTag(r.Context(), t); err != nil {
				return err
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
			for field, dst := range map[string]*string{"comment": &upd.Comment, "kernel_opts": &upd.KernelOpts, "definition": &upd.Definition} {
				if _, ok := r.form[field]; ok {
					*dst = r.form.Get(field)
				}
			}
			if err := bootcfg.CheckKernelOpts(upd.KernelOpts); err != nil && upd.KernelOpts != old.KernelOpts {
				return badField("kernel_opts", "%v", err)
			}
			upd.Definition = strings.TrimSpace(upd.Definition)
			if upd.Definition != "" && upd.Definition != old.Definition {
				if err := hwtags.Check(upd.Definition); err != nil {
					return badField("definition", "%v", err)
				}
			}
			t, err := s.store.UpdateTag(r.Context(), r.id, upd)
			if err != nil {
				return tagError(err)
			}
			if t.Definition != old.Definition {
				if _, _, err := s.svc.RebuildTag(r.Context(), t); err != nil {
					return err
				}
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
		get("machines", authenticated, s.taggedMachines),
		// Anvil's nodes are machines; it has no devices, and its
		// controllers carry no tags.
		get("nodes", authenticated, s.taggedMachines),
		get("devices", authenticated, s.taggedNone),
		get("rack_controllers", authenticated, s.taggedNone),
		get("region_controllers", authenticated, s.taggedNone),
		// rebuild evaluates the definition over every machine's lshw
		// details now; a tag without one is left as it is, as in MAAS.
		post("rebuild", adminOnly, func(w http.ResponseWriter, r *request) error {
			t, err := s.store.GetTag(r.Context(), r.id)
			if err != nil {
				return err
			}
			if _, _, err := s.svc.RebuildTag(r.Context(), t); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, map[string]string{"rebuilding": t.Name})
			return nil
		}),
		// update_nodes adds and removes machines in one transaction and
		// answers with the counts, as MAAS does.
		post("update_nodes", adminOnly, func(w http.ResponseWriter, r *request) error {
			if _, err := s.store.GetTag(r.Context(), r.id); err != nil {
				return err
			}
			add, remove := list(r, "add"), list(r, "remove")
			if len(add)+len(remove) == 0 {
				return badField("add", "give system_ids to add or remove")
			}
			if err := s.store.TagMachines(r.Context(), r.id, add, remove); errors.Is(err, store.ErrNotFound) {
				return s.unknownNodes(r, add, remove)
			} else if err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, map[string]int{"added": len(add), "removed": len(remove)})
			return nil
		}),
	}
}

func init() {
	addDocs(map[string]string{
		"TagHandler nodes":              doc("List the nodes with the tag that the caller may see (Anvil's nodes are machines)."),
		"TagHandler devices":            doc("List the devices with the tag (Anvil has no devices: always empty)."),
		"TagHandler rack_controllers":   doc("List the rack controllers with the tag (controllers carry no tags: always empty)."),
		"TagHandler region_controllers": doc("List the region controllers with the tag (controllers carry no tags: always empty)."),
		"TagHandler rebuild": doc("Rebuild the tag's machines from its definition (administrators).",
			"The XPath definition is evaluated over each machine's lshw details (its newest 00-maas-01-lshw result) at once; a tag without a definition is left as it is."),
	})
}

// taggedMachines lists the machines with the tag that the caller may see.
func (s *Server) taggedMachines(w http.ResponseWriter, r *request) error {
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
}

// taggedNone answers for node types Anvil has none of with the tag.
func (s *Server) taggedNone(w http.ResponseWriter, r *request) error {
	if _, err := s.store.GetTag(r.Context(), r.id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, []any{})
	return nil
}

// unknownNodes names, as a field error, the system IDs given to
// update_nodes that name no machine. MAAS skips them; Anvil refuses the
// call and changes nothing, so that a typo is not taken for success.
func (s *Server) unknownNodes(r *request, add, remove []string) error {
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{SystemIDs: append(slices.Clip(add), remove...)})
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, m := range ms {
		known[m.SystemID] = true
	}
	for _, field := range []struct {
		name string
		ids  []string
	}{{"add", add}, {"remove", remove}} {
		var missing []string
		for _, id := range field.ids {
			if !known[id] {
				missing = append(missing, truncate(id, 40))
			}
		}
		if len(missing) > 0 {
			return badField(field.name, "No such node(s): %s.", strings.Join(missing, ", "))
		}
	}
	// A machine deleted between the two reads: the call changed nothing.
	return &conflict{"a machine given was deleted meanwhile; nothing was changed"}
}

// tagError turns the store's plain validation error for a bad name into a
// field error; conflicts and the rest pass through.
func tagError(err error) error {
	if isStoreSentinel(err) {
		return err
	}
	return badField("name", "%v", err)
}
