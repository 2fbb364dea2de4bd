package ui

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// machineData is a machine page: the machine, what is queued for its BMC,
// and its timeline (boot steps, known-machine answers, power actions and
// their results, lifecycle changes), newest first.
type machineData struct {
	M        *machine.Machine
	InFlight *store.PowerRequest
	Waiting  []store.PowerRequest
	Events   []machine.Event
	More     bool // the timeline is longer than shown
	Actions  any
	Images   []string // what a deploy can use
	// For the edit form (admins only).
	Zones, Pools, PowerTypes []string
	Policies                 []machine.DriftPolicy
	// Expected is the power state Anvil wants, for the drift line.
	Expected machine.PowerState
}

const timelineLen = 200

func (s *Server) machineData(r *http.Request, u store.User) (machineData, error) {
	id := r.PathValue("id")
	m, err := s.store.GetMachine(r.Context(), id)
	if err == nil && !machine.CanView(machine.Actor{Name: u.Name, Admin: u.Admin}, &m) {
		err = fmt.Errorf("machine %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return machineData{}, err
	}
	d := machineData{M: &m, Actions: bulkActions, Expected: m.Watch.Expected}
	q, err := s.svc.Power.Queue(r.Context(), m.SystemID)
	if err != nil {
		return d, err
	}
	for i := range q {
		if q[i].State == store.PowerRunning {
			d.InFlight = &q[i]
		} else {
			d.Waiting = append(d.Waiting, q[i])
		}
	}
	evs, err := s.store.QueryEvents(r.Context(), store.EventFilter{SystemIDs: []string{m.SystemID}, MinLevel: machine.LevelDebug, Limit: timelineLen + 1})
	if err != nil {
		return d, err
	}
	if len(evs) > timelineLen {
		evs, d.More = evs[:timelineLen], true
	}
	d.Events = evs
	return d, nil
}

func (s *Server) machinePage(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	d, err := s.machineData(r, v.User)
	if err != nil {
		return "", err
	}
	if d.Images, err = s.deployableImages(r); err != nil {
		return "", err
	}
	if v.User.Admin {
		if d.Zones, d.Pools, err = s.groupNames(r); err != nil {
			return "", err
		}
		d.PowerTypes = s.svc.Power.Drivers().Names()
		slices.Sort(d.PowerTypes)
		d.Policies = []machine.DriftPolicy{machine.Enforce, machine.Warn}
	}
	v.Title, v.Nav, v.Data = d.M.FQDN(), "machines", d
	return "machine.html", nil
}

func (s *Server) machineLive(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	d, err := s.machineData(r, v.User)
	if err != nil {
		return "", err
	}
	v.Data = d
	return "machine_live.html", nil
}
