package api

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// The power work API: racks claim the power requests for the BMCs they
// reach, renew their leases, say when a command may reach the BMC and
// report how it ended (power.Coordinator's ClaimFor, Renew, Sent, Release
// and Report). Everything is checked before anything changes: a request
// the rack does not hold (its lease was lost, another rack's, unknown) is
// 409 or 404 and changes nothing.
func (s *Server) rackPowerRoutes() []route {
	return []route{
		post("power_claim", rackAccess, s.powerClaim),
		post("power_renew", rackAccess, s.powerRenew),
		post("power_sent", rackAccess, s.onHeld(func(p *power.Coordinator, r *request, rk, id string) error {
			return p.Sent(r.Context(), rk, id)
		})),
		post("power_release", rackAccess, s.onHeld(func(p *power.Coordinator, r *request, rk, id string) error {
			return p.Release(r.Context(), rk, id)
		})),
		post("power_result", rackAccess, s.powerResult),
	}
}

var rackIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func rackID(r *request) (string, error) {
	id := r.form.Get(rack.PowerRackID)
	if !rackIDPattern.MatchString(id) {
		return "", badField(rack.PowerRackID, "must be 1 to 64 letters, digits, '.', '_' or '-'")
	}
	// An enrolled rack claims only as itself.
	if c := r.who.rack; c != nil && rack.PowerRackOf(id) != c.RackID {
		return "", &statusError{code: http.StatusForbidden, msg: "rack_id is not this rack's: it must begin with " + c.RackID}
	}
	return id, nil
}

// heldRequest reads the rack id and request id of a call on a claimed
// request.
func heldRequest(r *request) (rk, id string, err error) {
	if rk, err = rackID(r); err != nil {
		return "", "", err
	}
	id = r.form.Get(rack.PowerRequestID)
	if id == "" || len(id) > 64 {
		return "", "", badField(rack.PowerRequestID, "this field is required")
	}
	return rk, id, nil
}

// leaseStatus turns the coordinator's refusals into the API's.
func leaseStatus(err error) error {
	var le *power.LeaseError
	switch {
	case errors.As(err, &le):
		return &statusError{code: http.StatusConflict, msg: le.Error()}
	case errors.Is(err, store.ErrNotFound):
		return &statusError{code: http.StatusNotFound, msg: "No PowerRequest matches the given query."}
	}
	return err
}

func (s *Server) powerClaim(w http.ResponseWriter, r *request) error {
	id, err := rackID(r)
	if err != nil {
		return err
	}
	nets, err := powerroute.ParseNetworks(r.form[rack.PowerNetworks])
	if err != nil {
		return badField(rack.PowerNetworks, "%v", err)
	}
	if nets, err = s.claimNetworks(r, id, nets); err != nil {
		return err
	}
	bad := r.form[rack.PowerUnreachable]
	if len(bad) > 1024 {
		return badField(rack.PowerUnreachable, "at most 1024 hosts")
	}
	wait := float64(rack.DefaultClaimWait)
	if v := r.form.Get(rack.PowerWait); v != "" {
		if wait, err = strconv.ParseFloat(v, 64); err != nil || !inRange(wait, 0, rack.MaxClaimWait) {
			return badField(rack.PowerWait, "must be a number of seconds from 0 to %d", rack.MaxClaimWait)
		}
	}
	rk := rackOf(r)
	k := power.RackClaim{ID: id, Hostname: rk.Hostname, Networks: nets, Unreachable: map[string]bool{}}
	if rk.Enrolled {
		k.SystemID = rk.SystemID
	}
	for _, h := range bad {
		k.Unreachable[h] = true
	}
	d := time.Duration(wait * float64(time.Second))
	httpserve.Extend(w, d+30*time.Second)
	cl, err := s.svc.Power.ClaimFor(r.Context(), k, d)
	if errors.Is(err, store.ErrNotFound) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		if r.Context().Err() != nil {
			return nil // the rack went away while it waited
		}
		return err
	}
	writeJSON(w, http.StatusOK, rack.PowerWork{
		ID: cl.Request.ID, SystemID: cl.Request.SystemID, Action: cl.Request.Action, BMC: cl.Request.BMCKey,
		Sent: !cl.Request.Sent.IsZero(), Attempts: cl.Request.Attempts, PowerType: cl.PowerType, PowerParameters: cl.Params,
		LeaseSeconds: cl.Lease.Seconds(),
	})
	return nil
}

func (s *Server) powerRenew(w http.ResponseWriter, r *request) error {
	rk, id, err := heldRequest(r)
	if err != nil {
		return err
	}
	lease, err := s.svc.Power.Renew(r.Context(), rk, id)
	if err != nil {
		return leaseStatus(err)
	}
	writeJSON(w, http.StatusOK, map[string]float64{"lease_seconds": lease.Seconds()})
	return nil
}

// onHeld is a call on a claimed request that answers with its id.
func (s *Server) onHeld(do func(p *power.Coordinator, r *request, rackID, id string) error) handlerFunc {
	return func(w http.ResponseWriter, r *request) error {
		rk, id, err := heldRequest(r)
		if err != nil {
			return err
		}
		if err := do(s.svc.Power, r, rk, id); err != nil {
			return leaseStatus(err)
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return nil
	}
}

var reportedStates = []machine.PowerState{machine.PowerOn, machine.PowerOff, machine.PowerUnknown, machine.PowerError}

func (s *Server) powerResult(w http.ResponseWriter, r *request) error {
	rk, id, err := heldRequest(r)
	if err != nil {
		return err
	}
	res := power.RackResult{
		State: machine.PowerState(r.form.Get(rack.PowerState)), Error: r.form.Get(rack.PowerError),
		Kind: power.Kind(r.form.Get(rack.PowerErrorKind)), Resumed: power.Step(r.form.Get(rack.PowerResumed)),
	}
	if !slices.Contains(reportedStates, res.State) {
		return badField(rack.PowerState, "must be one of on, off, unknown, error")
	}
	if len(res.Error) > 4000 {
		return badField(rack.PowerError, "at most 4000 characters")
	}
	if (res.Error == "") != (res.Kind == "") || res.Kind != "" && !slices.Contains(power.Kinds, res.Kind) {
		return badField(rack.PowerErrorKind, "a failure needs one of %v, a success none", power.Kinds)
	}
	if res.Resumed != "" && !slices.Contains(power.Steps, res.Resumed) {
		return badField(rack.PowerResumed, "must be one of %v", power.Steps)
	}
	secs, err := strconv.ParseFloat(r.form.Get(rack.PowerDuration), 64)
	if err != nil || !inRange(secs, 0, 24*3600) {
		return badField(rack.PowerDuration, "must be a number of seconds")
	}
	res.Duration = time.Duration(secs * float64(time.Second))
	if err := s.svc.Power.Report(r.Context(), rk, id, res); err != nil {
		return leaseStatus(err)
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id})
	return nil
}
