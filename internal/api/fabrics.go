package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

// fabrics/, fabrics/{id}/, fabrics/{fabric_id}/vlans/, .../vlans/{vid}/,
// vlans/{vlan_id}/, spaces/ and spaces/{id}/, as MAAS serves them: anyone
// logged in reads, administrators change.

func init() {
	addDocs(map[string]string{
		"FabricsHandler":        "Fabrics: sets of VLANs that reach each other at layer 2.",
		"FabricsHandler read":   doc("List the fabrics, each with its VLANs."),
		"FabricsHandler create": doc("Create a fabric with its untagged VLAN (administrators).", with("", fabricParams)...),
		"FabricHandler":         "One fabric, by its id.",
		"FabricHandler read":    doc("Read a fabric with its VLANs."),
		"FabricHandler update":  doc("Change a fabric (administrators).", with("", fabricParams)...),
		"FabricHandler delete":  doc("Delete a fabric and its VLANs (administrators): not the default fabric, nor one with subnets or interfaces."),

		"VlansHandler":        "The VLANs of a fabric.",
		"VlansHandler read":   doc("List a fabric's VLANs."),
		"VlansHandler create": doc("Create a VLAN on the fabric (administrators).", with("", append([]string{req("vid", "integer", "The VLAN id, 1 to 4094.")}, vlanParams...))...),
		"VlanHandler":         "One VLAN, by its fabric and VID (or by its id at vlans/{vlan_id}/).",
		"VlanHandler read":    doc("Read a VLAN."),
		"VlanHandler update":  doc("Change a VLAN (administrators).", with("", append([]string{opt("vid", "integer", "The VLAN id.")}, vlanUpdateParams...))...),
		"VlanHandler delete":  doc("Delete a VLAN (administrators): not a fabric's untagged VLAN. Its subnets and interfaces move to the fabric's untagged VLAN; VLAN interfaces on it are deleted."),

		"SpacesHandler":        "Spaces: named sets of VLANs and their subnets that share a purpose.",
		"SpacesHandler read":   doc("List the spaces; \"undefined\" (id -1) holds the VLANs in none."),
		"SpacesHandler create": doc("Create a space (administrators).", with("", spaceParams)...),
		"SpaceHandler":         "One space, by its id.",
		"SpaceHandler read":    doc("Read a space with its VLANs and subnets."),
		"SpaceHandler update":  doc("Change a space (administrators).", with("", spaceParams)...),
		"SpaceHandler delete":  doc("Delete a space (administrators); its VLANs are left in none."),
	})
}

var (
	fabricParams = []string{
		opt("name", "string", "A name; fabric-<id> when not given."),
		opt("description", "string", "Free text."),
		opt("class_type", "string", "The kind of fabric, such as 10g."),
	}
	vlanParams = []string{
		opt("name", "string", "A name."),
		opt("description", "string", "Free text."),
		opt("mtu", "integer", "The MTU, 552 to 65535 (1500 when not given)."),
		opt("space", "string", "The space's id or name; undefined for none."),
	}
	vlanUpdateParams = append(append([]string{}, vlanParams...),
		opt("dhcp_on", "boolean", "Serve DHCP on the VLAN's subnets (with a dynamic range)."),
		opt("primary_rack", "string", "The rack serving DHCP (system id or host name); with a secondary, it hands out the lower half of each dynamic range."),
		opt("secondary_rack", "string", "The second rack serving DHCP (needs a primary): it hands out the upper half of each dynamic range, and keeps the primary's clients on their addresses when the primary is gone."),
		opt("relay_vlan", "integer", "The id of the VLAN whose DHCP server answers this one through a relay."),
		opt("fabric", "integer", "Move the VLAN to this fabric."))
	spaceParams = []string{
		opt("name", "string", "A name; space-<id> when not given."),
		opt("description", "string", "Free text."),
	}
)

func (s *Server) fabricsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			fs, err := s.store.ListFabrics(r.Context())
			if err != nil {
				return err
			}
			out := make([]fabricJSON, 0, len(fs))
			for _, f := range fs {
				out = append(out, v.renderFabric(f))
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			var f store.Fabric
			applyFabricForm(r, &f)
			f, err := s.store.CreateFabric(r.Context(), f)
			if err != nil {
				return nameTaken(err, "Fabric")
			}
			return s.writeFabric(w, r, f)
		}),
	}
}

func applyFabricForm(r *request, f *store.Fabric) {
	if v, ok := r.form["name"]; ok {
		f.Name = strings.TrimSpace(first(v))
	}
	if v, ok := r.form["description"]; ok {
		f.Description = first(v)
	}
	if v, ok := r.form["class_type"]; ok {
		f.ClassType = strings.TrimSpace(first(v))
	}
}

// nameTaken answers a duplicate name in the words of Django's unique
// check, which MAAS's forms give.
func nameTaken(err error, model string) error {
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField("name", "%s with this Name already exists.", model)
	}
	return err
}

func (s *Server) writeFabric(w http.ResponseWriter, r *request, f store.Fabric) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderFabric(f))
	return nil
}

// pathID reads a numeric path parameter; anything else is the model's 404.
func pathID(v, model string) (int64, error) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, noSuch(model)
	}
	return id, nil
}

func (s *Server) fabricRoutes() []route {
	byID := func(r *request) (store.Fabric, error) {
		id, err := pathID(r.id, "Fabric")
		if err != nil {
			return store.Fabric{}, err
		}
		return s.store.GetFabric(r.Context(), id)
	}
	return objectRoutes(s, byID, func(_ *request, v *netView, f store.Fabric) any { return v.renderFabric(f) },
		func(w http.ResponseWriter, r *request, f store.Fabric) error {
			applyFabricForm(r, &f)
			if f.Name == "" {
				f.Name = "fabric-" + itoa(f.ID)
			}
			f, err := s.store.UpdateFabric(r.Context(), f)
			if err != nil {
				return nameTaken(err, "Fabric")
			}
			return s.writeFabric(w, r, f)
		},
		func(r *request, f store.Fabric) error {
			if f.ID == store.DefaultFabricID {
				return &badRequest{"This fabric is the default fabric, it cannot be deleted."}
			}
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			var cidrs []string
			for _, sn := range v.subnets {
				if v.vlan(sn.VLANID).FabricID == f.ID {
					cidrs = append(cidrs, sn.CIDR)
				}
			}
			if len(cidrs) > 0 {
				return &badRequest{"Can't delete fabric; the following subnets are still present: " + strings.Join(cidrs, ", ")}
			}
			err = s.store.DeleteFabric(r.Context(), f.ID)
			if errors.Is(err, store.ErrInUse) {
				return &badRequest{"Can't delete fabric; interfaces are still connected to its VLANs."}
			}
			return err
		})
}

func (s *Server) vlansRoutes() []route {
	fabric := func(r *request) (store.Fabric, error) {
		id, err := pathID(r.id, "Fabric")
		if err != nil {
			return store.Fabric{}, err
		}
		f, err := s.store.GetFabric(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			return f, noSuch("Fabric")
		}
		return f, err
	}
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			f, err := fabric(r)
			if err != nil {
				return err
			}
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, v.renderFabric(f).VLANs)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			f, err := fabric(r)
			if err != nil {
				return err
			}
			if strings.TrimSpace(r.form.Get("vid")) == "" {
				return badField("vid", "This field is required.")
			}
			vl := store.VLAN{FabricID: f.ID, MTU: network.DefaultMTU}
			return s.saveVLAN(w, r, vl, true)
		}),
	}
}

// saveVLAN applies the form to vl, checks it with the network model's
// rules and stores it.
func (s *Server) saveVLAN(w http.ResponseWriter, r *request, vl store.VLAN, create bool) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	if err := applyVLANForm(r, v, &vl, create); err != nil {
		return err
	}
	if !create {
		if err := s.vlanRacks(r, &vl); err != nil {
			return err
		}
	}
	n, err := s.store.LoadNetwork(r.Context())
	if err != nil {
		return err
	}
	if vl.DHCPOn {
		vl.RelayVLANID = 0 // MAAS's: a VLAN serving DHCP relays to none
	}
	if _, ok := v.fabrics[vl.FabricID]; !ok {
		return badField("fabric", "Select a valid choice. That choice is not one of the available choices.")
	}
	if err := network.ValidateVLAN(n, store.NetworkVLAN(vl)).Err(); err != nil {
		return err
	}
	if create {
		vl, err = s.store.CreateVLAN(r.Context(), vl)
	} else {
		vl, err = s.store.UpdateVLAN(r.Context(), vl)
	}
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		return badField("vid", "A VLAN with the specified VID already exists in the destination fabric.")
	}
	if err != nil {
		return err
	}
	s.svc.Hub.Notify()
	if v, err = s.netView(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v.renderVLAN(vl))
	return nil
}

func applyVLANForm(r *request, v *netView, vl *store.VLAN, create bool) error {
	num := func(name string, dst *int) error {
		val, ok := r.form[name]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(first(val)))
		if err != nil {
			return badField(name, "Enter a whole number.")
		}
		*dst = n
		return nil
	}
	if err := num("vid", &vl.VID); err != nil {
		return err
	}
	if err := num("mtu", &vl.MTU); err != nil {
		return err
	}
	if val, ok := r.form["name"]; ok {
		vl.Name = strings.TrimSpace(first(val))
	}
	if val, ok := r.form["description"]; ok {
		vl.Description = first(val)
	}
	if val, ok := r.form["space"]; ok {
		id, err := v.spaceID(strings.TrimSpace(first(val)))
		if err != nil {
			return err
		}
		vl.SpaceID = id
	}
	if create {
		return nil
	}
	if _, ok := r.form["dhcp_on"]; ok {
		on, err := boolParam(r, "dhcp_on")
		if err != nil {
			return err
		}
		vl.DHCPOn = on
	}
	var fabric int
	fabric = int(vl.FabricID)
	if err := num("fabric", &fabric); err != nil {
		return err
	}
	vl.FabricID = int64(fabric)
	if val, ok := r.form["relay_vlan"]; ok {
		vl.RelayVLANID = 0
		if x := strings.TrimSpace(first(val)); x != "" && x != "null" {
			id, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return badField("relay_vlan", "Select a valid choice. That choice is not one of the available choices.")
			}
			vl.RelayVLANID = id
		}
	}
	return nil
}

// spaceID finds a space by id or name; "" and "undefined" are none.
func (v *netView) spaceID(ref string) (int64, error) {
	if ref == "" || ref == undefinedSpace || ref == "-1" {
		return 0, nil
	}
	for _, sp := range v.spaces {
		if itoa(sp.ID) == ref || sp.Name == ref {
			return sp.ID, nil
		}
	}
	return 0, badField("space", "Select a valid choice. That choice is not one of the available choices.")
}

// vlanRoutes serve a VLAN by its fabric and VID (fabrics/{fabric_id}/
// vlans/{vid}/) or by its own id (vlans/{vlan_id}/).
func (s *Server) vlanRoutes() []route {
	find := func(r *request) (store.VLAN, error) {
		if ref := r.PathValue("vlan_id"); ref != "" {
			id, err := pathID(ref, "VLAN")
			if err != nil {
				return store.VLAN{}, err
			}
			vl, err := s.store.GetVLAN(r.Context(), id)
			if errors.Is(err, store.ErrNotFound) {
				return vl, noSuch("VLAN")
			}
			return vl, err
		}
		fid, err := pathID(r.id, "Fabric")
		if err != nil {
			return store.VLAN{}, err
		}
		if _, err := s.store.GetFabric(r.Context(), fid); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return store.VLAN{}, noSuch("Fabric")
			}
			return store.VLAN{}, err
		}
		vid, err := strconv.Atoi(r.PathValue("vid"))
		if err != nil {
			return store.VLAN{}, noSuch("VLAN")
		}
		vl, err := s.store.GetVLANByVID(r.Context(), fid, vid)
		if errors.Is(err, store.ErrNotFound) {
			return vl, noSuch("VLAN")
		}
		return vl, err
	}
	return objectRoutes(s, find, func(_ *request, v *netView, vl store.VLAN) any { return v.renderVLAN(vl) },
		func(w http.ResponseWriter, r *request, vl store.VLAN) error { return s.saveVLAN(w, r, vl, false) },
		func(r *request, vl store.VLAN) error {
			if vl.VID == 0 {
				return &badRequest{"This VLAN is the default VLAN in the fabric, it cannot be deleted."}
			}
			return s.store.DeleteVLAN(r.Context(), vl.ID)
		})
}

func (s *Server) spacesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			v, err := s.netView(r.Context())
			if err != nil {
				return err
			}
			sps, err := s.store.ListSpaces(r.Context())
			if err != nil {
				return err
			}
			out := make([]spaceJSON, 0, len(sps)+1)
			for _, sp := range sps {
				out = append(out, v.renderSpace(sp))
			}
			if u := v.renderSpace(undefinedSpaceObject); len(u.VLANs) > 0 {
				out = append(out, u)
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			var sp store.Space
			applySpaceForm(r, &sp)
			if sp.Name == undefinedSpace {
				return badField("name", "Space name cannot be %s.", undefinedSpace)
			}
			sp, err := s.store.CreateSpace(r.Context(), sp)
			if err != nil {
				return nameTaken(err, "Space")
			}
			return s.writeSpace(w, r, sp)
		}),
	}
}

// undefinedSpaceObject is MAAS's stand-in for "in no space", listed when
// some VLAN is in none; its VLANs are those with SpaceID 0.
var undefinedSpaceObject = store.Space{ID: 0, Name: undefinedSpace,
	Description: "Backward compatibility object to ensure objects not associated with a space can be found."}

func applySpaceForm(r *request, sp *store.Space) {
	if v, ok := r.form["name"]; ok {
		sp.Name = strings.TrimSpace(first(v))
	}
	if v, ok := r.form["description"]; ok {
		sp.Description = first(v)
	}
}

func (s *Server) writeSpace(w http.ResponseWriter, r *request, sp store.Space) error {
	v, err := s.netView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderSpaceOrUndefined(v, sp))
	return nil
}

// renderSpaceOrUndefined renders a space, or MAAS's undefined space as id
// -1.
func renderSpaceOrUndefined(v *netView, sp store.Space) spaceJSON {
	j := v.renderSpace(sp)
	if sp.ID == 0 {
		j.ID, j.ResourceURI = -1, Prefix+"spaces/-1/"
	}
	return j
}

func (s *Server) spaceRoutes() []route {
	byID := func(r *request) (store.Space, error) {
		if r.id == "-1" || r.id == undefinedSpace {
			return undefinedSpaceObject, nil
		}
		id, err := pathID(r.id, "Space")
		if err != nil {
			return store.Space{}, err
		}
		return s.store.GetSpace(r.Context(), id)
	}
	return objectRoutes(s, byID, func(_ *request, v *netView, sp store.Space) any { return renderSpaceOrUndefined(v, sp) },
		func(w http.ResponseWriter, r *request, sp store.Space) error {
			if sp.ID == 0 {
				return &badRequest{"Space cannot be modified: " + undefinedSpace}
			}
			applySpaceForm(r, &sp)
			if sp.Name == "" {
				sp.Name = "space-" + itoa(sp.ID)
			}
			sp, err := s.store.UpdateSpace(r.Context(), sp)
			if err != nil {
				return nameTaken(err, "Space")
			}
			return s.writeSpace(w, r, sp)
		},
		func(r *request, sp store.Space) error {
			if sp.ID == 0 {
				return &badRequest{"Space cannot be deleted: " + undefinedSpace}
			}
			return s.store.DeleteSpace(r.Context(), sp.ID)
		})
}
