package api

import (
	"strings"

	"github.com/anvilmetal/anvil/internal/fielderr"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// maxDeviceMACs bounds mac_addresses: a device is one host, and a
// request listing thousands is not one.
const maxDeviceMACs = 64

// invalidModelChoice is Django's word for a reference to nothing.
const invalidModelChoice = "Select a valid choice. That choice is not one of the available choices."

// parseNewDevice reads MAAS's DeviceWithMACsForm: the device's fields and
// its MACs, every fault reported at once and nothing stored.
func (s *Server) parseNewDevice(r *request) (store.Device, []string, error) {
	d := store.Device{Owner: r.who.user.Name}
	fe := fielderr.Errors{}
	var macs []string
	raw := r.form["mac_addresses"]
	for _, v := range raw {
		if strings.TrimSpace(v) == "" {
			continue
		}
		n, err := machine.NormaliseMAC(v)
		if err != nil {
			fe.Add("mac_addresses", "'%s' is not a valid MAC address.", truncate(v, 64))
			continue
		}
		macs = append(macs, n)
	}
	switch {
	case len(fe["mac_addresses"]) > 0 && len(raw) > 1:
		fe["mac_addresses"] = append([]string{"One or more MAC addresses is invalid."}, fe["mac_addresses"]...)
	case len(raw) > maxDeviceMACs:
		fe.Add("mac_addresses", "A device takes at most %d MAC addresses.", maxDeviceMACs)
	case len(macs) == 0 && len(fe["mac_addresses"]) == 0:
		fe.Add("mac_addresses", "This field is required.")
	}
	for k, m := range macs {
		for _, o := range macs[:k] {
			if o == m {
				fe.Add("mac_addresses", "MAC address %s is listed more than once.", m)
			}
		}
	}
	if err := s.applyDeviceForm(r, &d, true); err != nil {
		if more, ok := err.(fielderr.Errors); ok {
			for f, msgs := range more {
				fe[f] = append(fe[f], msgs...)
			}
		} else {
			return d, nil, err
		}
	}
	if d.Hostname == "" {
		d.Hostname = machine.Petname()
	}
	return d, macs, fe.Err()
}

// applyDeviceForm applies MAAS's DeviceForm fields the request gives
// (hostname, domain, description, parent, zone) to d after checking
// each; with a parent and no domain, a new device takes its parent's.
func (s *Server) applyDeviceForm(r *request, d *store.Device, creating bool) error {
	fe := fielderr.Errors{}
	given := func(f string) bool { _, ok := r.form[f]; return ok }
	if given("hostname") {
		h := strings.TrimSpace(r.form.Get("hostname"))
		switch {
		case h == "" && creating:
		case h == "":
			fe.Add("hostname", "This field cannot be blank.")
		case strings.Contains(h, "."):
			fe.Add("hostname", "Host label cannot contain a dot: give the domain in domain.")
		default:
			if err := machine.ValidateHostname(h); err != nil {
				fe.Add("hostname", "%s", err)
			} else {
				d.Hostname = strings.ToLower(h)
			}
		}
	}
	if given("description") {
		desc := r.form.Get("description")
		if err := machine.ValidateDescription(desc); err != nil {
			fe.Add("description", "Description %s.", err)
		} else {
			d.Description = desc
		}
	}
	if given("parent") {
		d.Parent, d.ParentOwner = "", ""
		if p := strings.TrimSpace(r.form.Get("parent")); p != "" {
			m, err := s.store.GetMachine(r.Context(), p)
			if err != nil || !machine.CanView(r.who.actor(), &m) {
				fe.Add("parent", invalidModelChoice)
			} else {
				d.Parent, d.ParentOwner = m.SystemID, m.Owner
				if creating && strings.TrimSpace(r.form.Get("domain")) == "" {
					d.Domain = m.Domain
				}
			}
		}
	}
	if given("domain") && strings.TrimSpace(r.form.Get("domain")) != "" {
		st, err := s.loadDNS(r.Context())
		if err != nil {
			return err
		}
		ref := r.form.Get("domain")
		if dom, ok := st.domainByRef(ref); ok {
			d.Domain = dom.Name
		} else {
			fe.Add("domain", "Unable to find domain %s", truncate(ref, 64))
		}
	}
	if z := strings.TrimSpace(r.form.Get("zone")); z != "" {
		if _, err := s.store.GetZone(r.Context(), z); err != nil {
			fe.Add("zone", invalidModelChoice)
		} else {
			d.Zone = z
		}
	}
	if len(fe) == 0 && (given("hostname") || given("domain")) {
		if err := s.mayNameNode(r, d.Hostname, d.Domain); err != nil {
			return err
		}
	}
	return fe.Err()
}
