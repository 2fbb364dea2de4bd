package api

import (
	"strings"

	"github.com/anvilmetal/anvil/internal/dhcpshare"
	"github.com/anvilmetal/anvil/internal/store"
)

// vlanRacks applies a VLAN update's primary_rack and secondary_rack to
// vl. Each names a rack that has followed the boot stream, by system id
// or host name, as MAAS's NodeChoiceField takes it ("" for none); the
// pair follows MAAS's rules (dhcpshare.SetRacks). A value equal to the
// stored one passes unchecked, so a client that sends a VLAN back as it
// read it is not refused for a rack that has since gone.
//
// MAAS also refuses a new secondary while the primary is dead, because
// its secondary's dhcpd could not synchronise with it. Here the partner's
// leases come from the region, so the secondary is set up whatever state
// the primary is in.
func (s *Server) vlanRacks(r *request, vl *store.VLAN) error {
	_, hasP := r.form["primary_rack"]
	_, hasS := r.form["secondary_rack"]
	if !hasP && !hasS {
		return nil
	}
	racks, err := s.store.ListRacks(r.Context())
	if err != nil {
		return err
	}
	field := func(name, stored string) (*string, error) {
		val, ok := r.form[name]
		if !ok {
			return nil, nil
		}
		ref := strings.TrimSpace(first(val))
		if ref == "" || ref == stored {
			return &ref, nil
		}
		if id, ok := rackByRef(racks, ref); ok {
			return &id, nil
		}
		return nil, badField(name, "Select a valid choice. %s is not one of the available choices.", ref)
	}
	var form dhcpshare.Form
	if form.Primary, err = field("primary_rack", vl.PrimaryRack); err != nil {
		return err
	}
	if form.Secondary, err = field("secondary_rack", vl.SecondaryRack); err != nil {
		return err
	}
	out, errs := dhcpshare.SetRacks(dhcpshare.Racks{Primary: vl.PrimaryRack, Secondary: vl.SecondaryRack}, form)
	if errs != nil {
		return errs
	}
	vl.PrimaryRack, vl.SecondaryRack = out.Primary, out.Secondary
	return nil
}

// rackByRef finds a rack by system id, else by a host name only one rack
// has.
func rackByRef(racks []store.Rack, ref string) (string, bool) {
	id, n := "", 0
	for _, k := range racks {
		if k.SystemID == ref {
			return k.SystemID, true
		}
		if k.Hostname == ref {
			id, n = k.SystemID, n+1
		}
	}
	return id, n == 1
}
