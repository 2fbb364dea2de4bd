package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/ratelimit"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Server) machineRoutes() []route {
	r := []route{
		get("", authenticated, s.readMachine),
		put(authenticated, s.updateMachine),
		del(adminOnly, s.deleteMachine),
		get("query_power_state", authenticated, s.queryPowerState),
		get("power_parameters", adminOnly, s.powerParameters),
		get("details", authenticated, s.details),
		get("power_queue", authenticated, s.powerQueue),
		get("get_token", adminOnly, s.getToken),
		post("restore_networking_configuration", authenticated, s.restore(machine.RestoreNetworking)),
		post("restore_storage_configuration", authenticated, s.restore(machine.RestoreStorage)),
		post("restore_default_configuration", authenticated, s.restore(machine.RestoreDefault)),
		post("set_storage_layout", authenticated, s.setStorageLayout),
		post("mount_special", authenticated, s.mountSpecial),
		post("unmount_special", authenticated, s.unmountSpecial),
		post("clear_default_gateways", authenticated, s.clearDefaultGateways),
	}
	for _, a := range machine.UserActions {
		if a == machine.Allocate {
			continue // allocation is on the collection
		}
		r = append(r, post(string(a), authenticated, s.action(a)))
	}
	for _, a := range machine.Operations {
		r = append(r, post(string(a), authenticated, s.action(a)))
	}
	// MAAS's older name for set_workload_annotations.
	return append(r, post("set_owner_data", authenticated, s.action(machine.SetWorkloadAnnotations)))
}

// visibleMachine loads a machine the caller may see; others are 404, as in
// MAAS, so that ids of other users' machines are not confirmed.
func (s *Server) visibleMachine(r *request) (machine.Machine, error) {
	m, err := s.store.GetMachine(r.Context(), r.id)
	if err == nil && !machine.CanView(r.who.actor(), &m) {
		err = fmt.Errorf("machine %s: %w", r.id, store.ErrNotFound)
	}
	return m, err
}

func (s *Server) readMachine(w http.ResponseWriter, r *request) error {
	m, err := s.visibleMachine(r)
	if err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

func (s *Server) deleteMachine(w http.ResponseWriter, r *request) error {
	if err := s.svc.Delete(r.Context(), r.who.actor(), r.id); err != nil {
		return err
	}
	writeNoContent(w)
	return nil
}

// updateMachine is PUT: only the fields given change, each validated first.
func (s *Server) updateMachine(w http.ResponseWriter, r *request) error {
	params, paramsGiven, err := parsePowerParameters(r)
	if err != nil {
		return err
	}
	keep, err := boolParam(r, "keep_credentials")
	if err != nil {
		return err
	}
	var given []string
	for _, f := range machine.UpdateFields() {
		if _, ok := r.form[f]; ok || (f == "power_parameters" && paramsGiven) {
			given = append(given, f)
		}
	}
	if err := s.checkGroups(r, r.form.Get("zone"), r.form.Get("pool")); err != nil {
		return err
	}
	edit := func(m *machine.Machine) error {
		if err := machine.MayUpdate(r.who.actor(), given); err != nil {
			return err
		}
		if h := r.form.Get("hostname"); h != "" {
			if err := machine.ValidateHostname(h); err != nil {
				return badField("hostname", "%v", err)
			}
			m.Hostname = h
		}
		if d := r.form.Get("domain"); d != "" {
			if err := machine.ValidateHostname(d); err != nil {
				return badField("domain", "%q is not a valid domain name", d)
			}
			m.Domain = d
		}
		if r.form.Get("hostname") != "" || r.form.Get("domain") != "" {
			if err := s.mayNameNode(r, m.Hostname, m.Domain); err != nil {
				return err
			}
		}
		if a := r.form.Get("architecture"); a != "" {
			n, err := machine.NormaliseArchitecture(a)
			if err != nil {
				return badField("architecture", "%v", err)
			}
			m.Architecture = n
		}
		if _, ok := r.form["description"]; ok {
			d := r.form.Get("description")
			if err := machine.ValidateDescription(d); err != nil {
				return badField("description", "%v", err)
			}
			m.Description = d
		}
		if z := r.form.Get("zone"); z != "" {
			m.Zone = z
		}
		if p := r.form.Get("pool"); p != "" {
			m.Pool = p
		}
		newType := m.PowerType
		if t := r.form.Get("power_type"); t != "" {
			newType = t
		}
		if newType != m.PowerType || paramsGiven {
			moved := machine.MovesBMC(m.PowerType, newType, m.PowerParams, params)
			old := m.PowerParams
			if newType != m.PowerType && !paramsGiven {
				old = nil // old parameters belong to the old type
			}
			// A moved BMC does not take the old credentials along unless
			// the administrator says so: the next query would send the
			// stored password to the new address.
			m.PowerType, m.PowerParams = newType, machine.MergePowerParams(old, params, moved, keep)
		}
		if v, ok := r.form["drift_policy"]; ok {
			p, err := machine.ParseDriftPolicy(v[0])
			if err != nil {
				return badField("drift_policy", "%v", err)
			}
			if p == machine.Enforce {
				// Asking for enforce again is how an operator re-arms a
				// tripped flap guard.
				m.Watch = machine.ResetGuard(m.Watch)
			}
			m.DriftPolicy = p
		}
		if v, ok, err := intParam(r, "cpu_count", 0, machine.MaxCPUs); err != nil {
			return err
		} else if ok {
			m.CPUCount = v
		}
		if v, ok, err := intParam(r, "memory", 0, machine.MaxMemoryMiB); err != nil {
			return err
		} else if ok {
			m.Memory = int64(v)
		}
		return nil
	}
	m, err := s.svc.Update(r.Context(), r.who.actor(), r.id, edit)
	if err != nil {
		return err
	}
	return s.writeMachine(w, r, http.StatusOK, &m)
}

// action serves one lifecycle op; its options come from the form.
func (s *Server) action(a machine.Action) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		in := machine.Input{Action: a, Comment: r.form.Get("comment"), From: ratelimit.Source(r.Request)}
		switch a {
		case machine.Release:
			mode, err := s.eraseMode(r)
			if err != nil {
				return err
			}
			in.Erase = mode
		case machine.Deploy:
			in.OSystem, in.DistroSeries = r.form.Get("osystem"), r.form.Get("distro_series")
			if err := deployOptions(r, &in); err != nil {
				return err
			}
			if err := s.mayDeployAs(r, in.Hostname); err != nil {
				return err
			}
			if err := s.svc.CheckDeployImage(r.Context(), r.who.actor(), r.id, in); err != nil {
				return err
			}
		case machine.MarkBroken:
			in.Comment = firstOr(r.form.Get("comment"), r.form.Get("error_description"))
		case machine.SetWorkloadAnnotations:
			// Every parameter but op is a key, as MAAS takes them; comment
			// too. A repeated key takes its last value.
			in.Comment, in.Annotations = "", map[string]string{}
			for k, v := range r.form {
				if k != "op" {
					in.Annotations[k] = v[len(v)-1]
				}
			}
		}
		var plan *region.ScriptPlan
		if a == machine.Commission || a == machine.Test {
			var err error
			if plan, err = s.svc.PlanScripts(r.Context(), a, list(r, "commissioning_scripts"), list(r, "testing_scripts")); err != nil {
				return err
			}
		}
		m, req, err := s.svc.Act(r.Context(), r.who.actor(), r.id, in)
		if err != nil {
			return err
		}
		if err := s.svc.StartScripts(r.Context(), m, plan); err != nil {
			return err
		}
		if plan != nil {
			if m, err = s.store.GetMachine(r.Context(), m.SystemID); err != nil {
				return err
			}
		}
		if a == machine.Deploy {
			s.svc.NoteImageDeployed(r.Context(), m)
		}
		if req != nil {
			w.Header().Set("X-Anvil-Power-Request", req.ID)
		}
		return s.writeMachine(w, r, http.StatusOK, &m)
	}
}

// deployOptions reads user_data (base64, as MAAS takes it), hostname and
// ephemeral_deploy (MAAS 3.5: run the image from memory, disks untouched).
func deployOptions(r *request, in *machine.Input) error {
	if v := r.form.Get("user_data"); v != "" {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return badField("user_data", "must be base64-encoded: %v", err)
		}
		if len(b) > 1<<20 {
			return badField("user_data", "must be at most 1 MiB")
		}
		in.UserData = b
	}
	if r.form.Has("ephemeral_deploy") {
		v, err := boolParam(r, "ephemeral_deploy")
		if err != nil {
			return err
		}
		in.Ephemeral = v
	}
	if h := r.form.Get("hostname"); h != "" {
		if err := machine.ValidateHostname(h); err != nil {
			return badField("hostname", "%v", err)
		}
		in.Hostname = h
	}
	return nil
}

// eraseMode reads release's erase, quick_erase and secure_erase; each
// one not given takes its setting (enable_disk_erasing_on_release,
// disk_erase_with_quick_erase, disk_erase_with_secure_erase), as MAAS
// does. Secure erase falls back, on disks that lack it, to a quick erase
// when quick_erase is set too and to a full one otherwise.
func (s *Server) eraseMode(r *request) (machine.EraseMode, error) {
	opt := func(name, setting string) (bool, error) {
		if !r.form.Has(name) {
			return s.svc.SettingBool(r.Context(), setting), nil
		}
		return boolParam(r, name)
	}
	erase, err := opt("erase", settings.EraseOnRelease)
	if err != nil {
		return "", err
	}
	quick, err := opt("quick_erase", settings.EraseQuick)
	if err != nil {
		return "", err
	}
	secure, err := opt("secure_erase", settings.EraseSecure)
	if err != nil {
		return "", err
	}
	explicit := r.form.Has("quick_erase") && quick || r.form.Has("secure_erase") && secure
	switch {
	case !erase && explicit:
		return "", badField("erase", "quick_erase and secure_erase need erase=true")
	case !erase:
		return machine.EraseNone, nil
	case secure && quick:
		return machine.EraseSecureQuick, nil
	case secure:
		return machine.EraseSecure, nil
	case quick:
		return machine.EraseQuick, nil
	}
	return machine.EraseFull, nil
}

// queryPowerState asks the BMC through the machine's queue and answers
// MAAS's {"state": ...}; a type that cannot be queried says "unknown".
func (s *Server) queryPowerState(w http.ResponseWriter, r *request) error {
	m, err := s.visibleMachine(r)
	if err != nil {
		return err
	}
	const wait = 5 * time.Minute
	httpserve.Extend(w, wait+30*time.Second)
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	res, err := s.svc.Power.Do(ctx, m, power.QueryAction, r.who.user.Name, "query_power_state")
	if err != nil {
		return err
	}
	if res.State == store.PowerFailed {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"state": string(machine.PowerError), "error": res.Error, "error_kind": res.ErrorKind})
		return nil
	}
	state := res.ResultState
	if state == "" {
		state = string(machine.PowerUnknown)
	}
	writeJSON(w, http.StatusOK, map[string]string{"state": state})
	return nil
}

// powerParameters shows a machine's parameters, secrets included: admins only.
func (s *Server) powerParameters(w http.ResponseWriter, r *request) error {
	m, err := s.store.GetMachine(r.Context(), r.id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(m.PowerParams))
	return nil
}

// details returns what commissioning found. Until the machine has been
// commissioned there is nothing, which MAAS also answers as empty.
type queuedJSON struct {
	ID          string `json:"id"`
	Action      string `json:"action"`
	State       string `json:"state"`
	RequestedBy string `json:"requested_by"`
	Reason      string `json:"reason"`
	Queued      string `json:"queued"`
	Started     string `json:"started,omitempty"`
	Attempts    int    `json:"attempts"`
}

func renderQueued(q store.PowerRequest) queuedJSON {
	j := queuedJSON{ID: q.ID, Action: q.Action, State: q.State, RequestedBy: q.RequestedBy, Reason: q.Reason,
		Queued: q.Created.UTC().Format(time.RFC3339Nano), Attempts: q.Attempts}
	if !q.Started.IsZero() {
		j.Started = q.Started.UTC().Format(time.RFC3339Nano)
	}
	return j
}

// powerQueue is an Anvil extension: what is in flight and waiting.
func (s *Server) powerQueue(w http.ResponseWriter, r *request) error {
	m, err := s.visibleMachine(r)
	if err != nil {
		return err
	}
	q, err := s.svc.Power.Queue(r.Context(), m.SystemID)
	if err != nil {
		return err
	}
	out := map[string]any{"system_id": m.SystemID, "in_flight": nil}
	waiting := []queuedJSON{}
	for _, req := range q {
		if req.State == store.PowerRunning {
			out["in_flight"] = renderQueued(req)
		} else {
			waiting = append(waiting, renderQueued(req))
		}
	}
	out["waiting"] = waiting
	writeJSON(w, http.StatusOK, out)
	return nil
}
