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
	// HideBoot says the timeline leaves out boot steps (the viewer's
	// choice, kept in a cookie).
	HideBoot bool
	// Actions are what the viewer may do to the machine as it is.
	Actions []actionButton
	// IPs maps each interface's MAC to the address it was last seen with.
	IPs       map[string]string
	Addresses []string // the distinct addresses, in interface order
	Images    []string // what a deploy can use
	// For the edit form (admins only).
	Zones, Pools, PowerTypes []string
	Policies                 []machine.DriftPolicy
	// Expected is the power state Anvil wants, for the drift line.
	Expected machine.PowerState
	// The full page's network, storage and script results sections;
	// Admin shows their forms.
	Admin   bool
	Net     machineNet
	Storage machineStorage
	Results []resultSet
}

const timelineLen = 200

// actionButton is one action a machine page offers.
type actionButton struct{ Op, Label string }

// actionLabels name the operations on a machine's page.
var actionLabels = map[machine.Action]string{
	machine.Commission: "Commission", machine.Abort: "Abort", machine.Allocate: "Allocate", machine.Deploy: "Deploy",
	machine.Release: "Release", machine.MarkBroken: "Mark broken", machine.MarkFixed: "Mark fixed",
	machine.EnterRescue: "Rescue mode", machine.ExitRescue: "Exit rescue mode", machine.Test: "Test",
	machine.PowerOnAction: "Power on", machine.PowerOffAction: "Power off",
}

// viewMachine reads the machine the request names, as the viewer may see it.
func (s *Server) viewMachine(r *http.Request, u store.User) (machine.Machine, error) {
	id := r.PathValue("id")
	m, err := s.store.GetMachine(r.Context(), id)
	if err == nil && !machine.CanView(machine.Actor{Name: u.Name, Admin: u.Admin}, &m) {
		err = fmt.Errorf("machine %s: %w", id, store.ErrNotFound)
	}
	return m, err
}

// offered is what u may do to m as it is: the actions the domain would
// accept (machine.Offered), and delete for administrators, as the API
// allows.
func (s *Server) offered(m *machine.Machine, u store.User) []actionButton {
	var out []actionButton
	for _, a := range machine.Offered(*m, machine.Actor{Name: u.Name, Admin: u.Admin}, s.svc.Config, s.svc.Now()) {
		out = append(out, actionButton{string(a), actionLabels[a]})
	}
	if u.Admin {
		out = append(out, actionButton{"delete", "Delete"})
	}
	return out
}

// hideBootCookie keeps a viewer's choice to leave boot steps out of
// machine timelines.
const hideBootCookie = "anvil_timeline_boot"

func (s *Server) machineData(r *http.Request, u store.User) (machineData, error) {
	m, err := s.viewMachine(r, u)
	if err != nil {
		return machineData{}, err
	}
	d := machineData{M: &m, Actions: s.offered(&m, u), Expected: m.Watch.Expected, IPs: map[string]string{}}
	if c, err := r.Cookie(hideBootCookie); err == nil && c.Value == "hide" {
		d.HideBoot = true
	}
	var macs []string
	for _, i := range m.Interfaces {
		macs = append(macs, i.MAC)
	}
	seen, err := s.store.MachineSightings(r.Context(), macs)
	if err != nil {
		return d, err
	}
	for _, x := range seen {
		d.IPs[x.MAC] = x.IP
	}
	d.Addresses = ipsOf(macs, d.IPs)
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
	f := store.EventFilter{SystemIDs: []string{m.SystemID}, MinLevel: machine.LevelDebug, Limit: timelineLen + 1}
	if d.HideBoot {
		f.SkipTypePrefix = machine.BootStepType
	}
	evs, err := s.store.QueryEvents(r.Context(), f)
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
	if d.Net, err = s.machineNet(r.Context(), d.M.SystemID); err != nil {
		return "", err
	}
	d.Storage, d.Admin = storageOf(d.M.StorageConfig), v.User.Admin
	if d.Results, err = s.machineResults(r, d.M.SystemID); err != nil {
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

// machineActions is the machine page's buttons, fetched again when the
// machine changes, so that they follow its status.
func (s *Server) machineActions(w http.ResponseWriter, r *http.Request, v *view) (string, error) {
	m, err := s.viewMachine(r, v.User)
	if err != nil {
		return "", err
	}
	v.Data = machineData{M: &m, Actions: s.offered(&m, v.User)}
	return "actions.html", nil
}
