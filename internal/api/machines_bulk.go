package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/store"
)

// MAAS's operations on many machines at once, beyond listing, allocating
// and releasing.

// listAllocated is MAAS's list_allocated: the caller's machines in
// Allocated (not yet deployed), optionally only some ids.
func (s *Server) listAllocated(w http.ResponseWriter, r *request) error {
	return s.writeMachines(w, r, store.MachineFilter{
		Owners: []string{r.who.user.Name}, Statuses: []machine.Status{machine.Allocated}, SystemIDs: list(r, "id"),
	})
}

// acceptAll is MAAS's accept_all: accept every held boot the caller may,
// which for anyone but an administrator is none. Locked machines are left
// held, as MAAS leaves them out.
func (s *Server) acceptAll(w http.ResponseWriter, r *request) error {
	out := []machineJSON{}
	if !r.who.user.Admin {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	ids, err := s.store.HeldBootMachines(r.Context())
	if err != nil {
		return err
	}
	n, err := s.loadNames(r)
	if err != nil {
		return err
	}
	for _, id := range ids {
		m, err := s.svc.AcceptHeld(r.Context(), r.who.actor().Name, id)
		switch {
		case errors.Is(err, machine.ErrForbidden), errors.Is(err, store.ErrNotFound), errors.Is(err, region.ErrNothingHeld):
			continue // locked, or gone or accepted meanwhile
		case err != nil:
			return err
		}
		out = append(out, renderMachine(&m, n, false))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// setZone is MAAS's set_zone: every machine named moves to the zone, or
// none does. Machines that do not exist or are locked are MAAS's invalid
// system ids.
func (s *Server) setZone(w http.ResponseWriter, r *request) error {
	zone := r.form.Get("zone")
	if zone == "" {
		return badField("zone", "This field is required.")
	}
	if _, err := s.store.GetZone(r.Context(), zone); errors.Is(err, store.ErrNotFound) {
		return badField("zone", "Select a valid choice. That choice is not one of the available choices.")
	} else if err != nil {
		return err
	}
	ids := slices.Compact(slices.Sorted(slices.Values(list(r, "nodes"))))
	if len(ids) == 0 {
		return badField("system_id", "No node selected.")
	}
	ms, err := s.store.ListMachines(r.Context(), store.MachineFilter{SystemIDs: ids})
	if err != nil {
		return err
	}
	usable := 0
	for i := range ms {
		if !ms[i].Locked {
			usable++
		}
	}
	if usable != len(ids) {
		return badField("system_id", "Some of the given system ids are invalid system ids.")
	}
	for _, id := range ids {
		_, err := s.svc.Update(r.Context(), r.who.actor(), id, func(m *machine.Machine) error {
			m.Zone = zone
			return nil
		})
		if err != nil {
			return fmt.Errorf("set zone of %s: %w", id, err)
		}
	}
	writeNoContent(w)
	return nil
}
