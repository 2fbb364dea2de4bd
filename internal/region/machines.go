package region

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// ValidationError names the request field that is wrong.
type ValidationError struct {
	Field string
	Err   error
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *ValidationError) Unwrap() error { return e.Err }

// ValidatePower checks a power type and its parameters against its driver.
func (s *Service) ValidatePower(powerType string, params map[string]string) error {
	d, err := s.Power.Drivers().Lookup(powerType)
	if err != nil {
		return &ValidationError{Field: "power_type", Err: err}
	}
	if err := d.Validate(params); err != nil {
		return &ValidationError{Field: "power_parameters", Err: err}
	}
	return nil
}

// Create stores a new machine, then starts commissioning if asked. The
// machine and its creation event are one transaction.
func (s *Service) Create(ctx context.Context, actor machine.Actor, m *machine.Machine, commission bool) error {
	if err := s.ValidatePower(m.PowerType, m.PowerParams); err != nil {
		return err
	}
	id, err := s.bmcIdentity(*m)
	if err != nil {
		return err
	}
	m.BMCIdentity = id
	oob := s.outOfBand(ctx, m)
	now := s.Now()
	m.Created, m.Updated = now, now
	if m.PowerState == "" {
		m.PowerState = machine.PowerUnknown
	}
	ev := machine.Event{
		Hostname: m.Hostname, Type: "Created", Level: machine.LevelInfo, User: actor.Name, Created: now,
		Description: fmt.Sprintf("Machine %s added by %s with %d interface(s), power type %s%s", m.Hostname, actorName(actor), len(m.Interfaces), m.PowerType, oob),
	}
	if err := s.Store.CreateMachine(ctx, m, []machine.Event{ev}); err != nil {
		return err
	}
	s.Hub.Notify()
	if !commission {
		// Commissioning's power command reads the state on its own.
		s.queryNewBMC(ctx, *m)
		return nil
	}
	got, _, err := s.Act(ctx, actor, m.SystemID, machine.Input{Action: machine.Commission})
	if err != nil {
		return fmt.Errorf("machine %s was added but commissioning did not start: %w", m.SystemID, err)
	}
	s.defaultScripts(ctx, got)
	*m = got
	return nil
}

// outOfBand fills in the MACs and UUID of a machine added by its BMC
// alone, when the BMC can name them (Redfish). It returns what to add to
// the creation event; a BMC that cannot answer leaves the machine to be
// matched when it boots.
func (s *Service) outOfBand(ctx context.Context, m *machine.Machine) string {
	if len(m.Interfaces) > 0 {
		return ""
	}
	d, err := s.Power.Drivers().Lookup(m.PowerType)
	inv, ok := d.(power.Inventorier)
	if err != nil || !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	uuid, macs, err := inv.Inventory(ctx, m.PowerParams)
	if err != nil {
		return fmt.Sprintf("; its BMC could not name its MACs (%v), so they are learned when it boots", err)
	}
	for i, raw := range macs {
		if mac, err := machine.NormaliseMachineMAC(raw); err == nil {
			m.Interfaces = append(m.Interfaces, machine.Interface{Name: "eth" + strconv.Itoa(i), MAC: mac, Boot: len(m.Interfaces) == 0})
		}
	}
	if m.HardwareUUID == "" && machine.UsableUUID(uuid) {
		m.HardwareUUID = strings.ToLower(uuid)
	}
	return fmt.Sprintf("; its BMC named %d MAC(s) and UUID %q out of band", len(m.Interfaces), m.HardwareUUID)
}

// Update applies an edit (the API's PUT) to a machine the actor may edit,
// recording which fields changed. Power parameters are re-validated.
func (s *Service) Update(ctx context.Context, actor machine.Actor, systemID string, edit func(m *machine.Machine) error) (machine.Machine, error) {
	newBMC := false
	m, err := s.update(ctx, systemID, func(m *machine.Machine) ([]machine.Event, error) {
		if !machine.CanView(actor, m) {
			return nil, fmt.Errorf("machine %s: %w", systemID, store.ErrNotFound)
		}
		if !machine.CanEdit(actor, m) {
			return nil, &machine.ForbiddenError{Action: "update", Reason: "the machine is not yours"}
		}
		if err := machine.CheckUnlocked(actor, m, "update"); err != nil {
			return nil, err
		}
		before := m.Clone()
		if err := edit(m); err != nil {
			return nil, err
		}
		if err := s.ValidatePower(m.PowerType, m.PowerParams); err != nil {
			return nil, err
		}
		id, err := s.bmcIdentity(*m)
		if err != nil {
			return nil, err
		}
		m.BMCIdentity = id
		newBMC = id != before.BMCIdentity || m.PowerType != before.PowerType
		changed := changedFields(&before, m)
		if len(changed) == 0 {
			return nil, nil
		}
		m.Updated = s.Now()
		return []machine.Event{{
			SystemID: m.SystemID, Hostname: m.Hostname, Type: "Updated", Level: machine.LevelInfo,
			User: actor.Name, Created: m.Updated,
			Description: fmt.Sprintf("%s changed by %s", strings.Join(changed, ", "), actorName(actor)),
		}}, nil
	})
	if err == nil {
		s.Hub.Notify()
		if newBMC {
			s.queryNewBMC(ctx, m)
		}
	}
	return m, err
}

// queryNewBMC asks a BMC just added (or changed) for the machine's power
// state at once, rather than leaving it unknown until the monitor's slot
// for the machine comes round, up to a poll interval later. It goes
// through the power queue like every poll. A BMC that cannot be queried
// (manual power) is left alone; a failure to queue is logged, never the
// caller's error, since the machine is stored either way.
func (s *Service) queryNewBMC(ctx context.Context, m machine.Machine) {
	if !s.Power.Drivers().Queryable(m.PowerType) {
		return
	}
	if _, _, err := s.Power.Submit(ctx, m, power.QueryAction, "", "new BMC"); err != nil {
		s.logErr(err, "query new BMC", m.SystemID)
	}
}

// Delete removes a machine; only admins may, as in MAAS.
func (s *Service) Delete(ctx context.Context, actor machine.Actor, systemID string) error {
	m, err := s.Store.GetMachine(ctx, systemID)
	if err != nil {
		return err
	}
	if !actor.Admin && !actor.System {
		if !machine.CanView(actor, &m) {
			return fmt.Errorf("machine %s: %w", systemID, store.ErrNotFound)
		}
		return &machine.ForbiddenError{Action: "delete", Reason: "an administrator must do this"}
	}
	if err := machine.CheckUnlocked(actor, &m, "delete"); err != nil {
		return err
	}
	err = s.Store.DeleteMachine(ctx, systemID, []machine.Event{{
		SystemID: m.SystemID, Hostname: m.Hostname, Type: "Deleted", Level: machine.LevelInfo,
		User: actor.Name, Created: s.Now(), Description: fmt.Sprintf("Machine %s deleted by %s", m.Hostname, actorName(actor)),
	}})
	if err == nil {
		s.Hub.Notify()
	}
	return err
}

// changedFields names the operator-visible fields that differ; power
// parameters are named, never shown, since they hold secrets.
func changedFields(a, b *machine.Machine) []string {
	var out []string
	add := func(name string, differ bool) {
		if differ {
			out = append(out, name)
		}
	}
	add("hostname", a.Hostname != b.Hostname)
	add("domain", a.Domain != b.Domain)
	add("architecture", a.Architecture != b.Architecture)
	add("description", a.Description != b.Description)
	add("zone", a.Zone != b.Zone)
	add("pool", a.Pool != b.Pool)
	add("power_type", a.PowerType != b.PowerType)
	add("cpu_count", a.CPUCount != b.CPUCount)
	add("memory", a.Memory != b.Memory)
	add("drift_policy", a.DriftPolicy != b.DriftPolicy)
	var keys []string
	for k := range union(a.PowerParams, b.PowerParams) {
		if a.PowerParams[k] != b.PowerParams[k] {
			keys = append(keys, "power_parameters_"+k)
		}
	}
	sort.Strings(keys)
	return append(out, keys...)
}

func union(a, b map[string]string) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

func actorName(a machine.Actor) string {
	if a.System || a.Name == "" {
		return "Anvil"
	}
	return a.Name
}

// CanonicaliseBMCs rewrites BMC identities stored under an older rule
// (no default port, names unresolved) in today's canonical form, so that
// the uniqueness index compares like with like. Two machines that turn
// out to share a BMC keep their old identities and are logged for an
// administrator: merging or choosing is not Anvil's to do. It returns how
// many were rewritten.
func (s *Service) CanonicaliseBMCs(ctx context.Context) (int, error) {
	ms, err := s.Store.ListMachines(ctx, store.MachineFilter{WithPowerParams: true})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		if m.BMCIdentity == "" {
			continue
		}
		id, err := s.bmcIdentity(m)
		if err != nil || id == m.BMCIdentity {
			continue
		}
		_, err = s.update(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
			m.BMCIdentity = id
			return nil, nil
		})
		if err != nil {
			s.Log.Warn("BMC identity left as it was", "system_id", m.SystemID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}
