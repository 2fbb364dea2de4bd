package api

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's boot-sources/, read only. MAAS syncs images from simplestreams
// mirrors, each a boot source with selections of what to sync; Anvil
// syncs nothing. It has one source, the local one: the images uploaded
// to boot-resources/, which is where its URL points, and one selection per
// uploaded OS and release with the architectures uploaded for it.

func init() {
	addDocs(map[string]string{
		"BootSourcesHandler": "Where images come from. Anvil has one source, the local one: images uploaded to boot-resources/ (it syncs from no mirror).",
		"BootSourcesHandler read": doc("List the boot sources (administrators).",
			"The one local source, id 1, whose url is this region's boot-resources/."),
		"BootSourceHandler":               "One boot source.",
		"BootSourceHandler read":          doc("Read a boot source (administrators)."),
		"BootSourceSelectionsHandler":     "What a boot source provides: for the local source, each uploaded OS and release with its architectures.",
		"BootSourceSelectionHandler":      "One selection of a boot source.",
		"BootSourceSelectionHandler read": doc("Read a boot source's selection (administrators)."),
		"BootSourceSelectionsHandler read": doc("List a boot source's selections (administrators).",
			"One per uploaded OS and release; os is custom for custom images, subarches and labels are *."),
	})
}

const localSourceID = "1"

// maasDate is how MAAS's API renders a model's created and updated.
const maasDate = "2006-01-02T15:04:05.000"

func (s *Server) bootSourcesRoutes() []route {
	return []route{get("", adminOnly, func(w http.ResponseWriter, r *request) error {
		src, err := s.localSource(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, []map[string]any{src})
		return nil
	})}
}

func (s *Server) bootSourceRoutes() []route {
	return []route{get("", adminOnly, func(w http.ResponseWriter, r *request) error {
		if r.id != localSourceID {
			return store.ErrNotFound
		}
		src, err := s.localSource(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, src)
		return nil
	})}
}

func (s *Server) bootSourceSelectionsRoutes() []route {
	return []route{get("", adminOnly, func(w http.ResponseWriter, r *request) error {
		if r.id != localSourceID {
			return store.ErrNotFound
		}
		list, err := s.store.ListBootResources(r.Context())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, selections(list))
		return nil
	})}
}

// bootSourceSelectionRoutes serve boot-sources/{boot_source_id}/selections/{id}/:
// r.id is the source's, the path's id the selection's.
func (s *Server) bootSourceSelectionRoutes() []route {
	return []route{get("", adminOnly, func(w http.ResponseWriter, r *request) error {
		if r.id != localSourceID {
			return noSuch("BootSource")
		}
		list, err := s.store.ListBootResources(r.Context())
		if err != nil {
			return err
		}
		for _, sel := range selections(list) {
			if itoa(sel["id"].(int64)) == r.PathValue("id") {
				writeJSON(w, http.StatusOK, sel)
				return nil
			}
		}
		return store.ErrNotFound
	})}
}

// localSource is the local source as MAAS renders a boot source
// (DISPLAYED_BOOTSOURCE_FIELDS): created and updated are those of the
// oldest and newest upload (the epoch before any).
func (s *Server) localSource(r *request) (map[string]any, error) {
	list, err := s.store.ListBootResources(r.Context())
	if err != nil {
		return nil, err
	}
	created, updated := time.Unix(0, 0), time.Unix(0, 0)
	for i, b := range list {
		if i == 0 || b.Created.Before(created) {
			created = b.Created
		}
		if b.Updated.After(updated) {
			updated = b.Updated
		}
	}
	return map[string]any{
		"id": 1, "name": "local", "url": strings.TrimSuffix(s.opts.Self, "/") + "/api/2.0/boot-resources/",
		"priority": 1, "enabled": true, "keyring_filename": "", "keyring_data": "", "skip_keyring_verification": true,
		"created": created.UTC().Format(maasDate), "updated": updated.UTC().Format(maasDate),
		"resource_uri": Prefix + "boot-sources/1/",
	}, nil
}

// selections groups the uploaded resources by OS and release, as MAAS's
// DISPLAYED_BOOTSOURCESELECTION_FIELDS; a selection's id is its lowest
// resource id, stable while that image stays.
func selections(list []store.BootResource) []map[string]any {
	type sel struct {
		id     int64
		os     string
		arches []string
	}
	byName := map[string]*sel{}
	for _, b := range list {
		os, release, ok := strings.Cut(b.Name, "/")
		if !ok {
			os, release = "custom", b.Name
		}
		key := os + "/" + release
		sl := byName[key]
		if sl == nil {
			sl = &sel{id: b.ID, os: os}
			byName[key] = sl
		}
		sl.id = min(sl.id, b.ID)
		if arch, _, _ := strings.Cut(b.Architecture, "/"); !slices.Contains(sl.arches, arch) {
			sl.arches = append(sl.arches, arch)
		}
	}
	out := make([]map[string]any, 0, len(byName))
	for key, sl := range byName {
		sort.Strings(sl.arches)
		_, release, _ := strings.Cut(key, "/")
		out = append(out, map[string]any{
			"boot_source_id": 1, "id": sl.id, "os": sl.os, "release": release, "arches": sl.arches,
			"subarches": []string{"*"}, "labels": []string{"*"},
			"resource_uri": Prefix + "boot-sources/1/selections/" + itoa(sl.id) + "/",
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(int64) < out[j]["id"].(int64) })
	return out
}
