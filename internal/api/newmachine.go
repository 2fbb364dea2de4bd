package api

import (
	"errors"

	"github.com/anvilmetal/anvil/internal/store"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
)

// parseNewMachine validates a create request completely before anything is
// stored, so a bad field never leaves a half-made machine.
func (s *Server) parseNewMachine(r *request) (machine.Machine, bool, error) {
	m := machine.Machine{
		Status: machine.New, Domain: "maas", Zone: r.form.Get("zone"), Pool: r.form.Get("pool"),
		Description: r.form.Get("description"), PowerType: r.form.Get("power_type"),
		PowerState: machine.PowerUnknown,
	}
	var err error
	if m.Architecture, err = machine.NormaliseArchitecture(firstOr(r.form.Get("architecture"), "amd64/generic")); err != nil {
		return m, false, badField("architecture", "%v", err)
	}
	// A machine joins the default domain, as in MAAS (set_default).
	if ds, err := s.store.ListDomains(r.Context()); err == nil {
		for _, d := range ds {
			if d.Default {
				m.Domain = d.Name
			}
		}
	}
	if d := r.form.Get("domain"); d != "" {
		if err := machine.ValidateHostname(d); err != nil {
			return m, false, badField("domain", "%q is not a valid domain name", d)
		}
		m.Domain = d
	}
	if h := r.form.Get("hostname"); h != "" {
		host, domain, _ := strings.Cut(h, ".")
		if err := machine.ValidateHostname(h); err != nil {
			return m, false, badField("hostname", "%v", err)
		}
		m.Hostname = host
		if domain != "" {
			m.Domain = domain
		}
	} else {
		m.Hostname = machine.Petname()
	}
	if err := s.mayNameNode(r, m.Hostname, m.Domain); err != nil {
		return m, false, err
	}
	if err := machine.ValidateDescription(m.Description); err != nil {
		return m, false, badField("description", "%v", err)
	}
	seen := map[string]bool{}
	for i, raw := range list(r, "mac_addresses") {
		mac, err := machine.NormaliseMachineMAC(raw)
		if err != nil {
			return m, false, badField("mac_addresses", "%v", err)
		}
		if seen[mac] {
			return m, false, badField("mac_addresses", "%s is given twice", mac)
		}
		seen[mac] = true
		m.Interfaces = append(m.Interfaces, machine.Interface{Name: sprintf("eth%d", i), MAC: mac, Boot: i == 0})
	}
	if m.PowerType == "" {
		m.PowerType = "manual"
	}
	if m.PowerParams, _, err = parsePowerParameters(r); err != nil {
		return m, false, err
	}
	if len(m.Interfaces) == 0 && m.PowerType == "manual" {
		return m, false, badField("mac_addresses", "at least one MAC address is required, unless the machine is added by its BMC (power_type and power_parameters)")
	}
	if err := s.checkGroups(r, m.Zone, m.Pool); err != nil {
		return m, false, err
	}
	commission, err := boolParam(r, "commission")
	// A machine added by its BMC alone is booted to learn its MACs: that
	// boot is its commissioning.
	return m, commission || len(m.Interfaces) == 0, err
}

// checkGroups turns an unknown zone or pool into a field error, in the
// words of Django's choice fields (MAAS's machine forms), naming the value.
func (s *Server) checkGroups(r *request, zone, pool string) error {
	if zone != "" {
		if _, err := s.store.GetZone(r.Context(), zone); errors.Is(err, store.ErrNotFound) {
			return badField("zone", invalidChoice, truncate(zone, 60))
		} else if err != nil {
			return err
		}
	}
	if pool != "" {
		if _, err := s.store.GetPool(r.Context(), pool); errors.Is(err, store.ErrNotFound) {
			return badField("pool", invalidChoice, truncate(pool, 60))
		} else if err != nil {
			return err
		}
	}
	return nil
}

const invalidChoice = "Select a valid choice. %s is not one of the available choices."

func firstOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
