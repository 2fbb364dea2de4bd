package region

import (
	"context"
	"errors"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// observe feeds a power reading to the drift policy (machine.Observe) and
// carries out what it decides, in one transaction with the reading: the
// events, a failed phase, and a correction queued after commit.
func (s *Service) observe(ctx context.Context, r power.Result) {
	if errors.Is(r.Err, power.ErrUnsupported) {
		return // nothing can be learnt; the monitor skips such machines
	}
	now := s.Now()
	pools, err := s.Store.PoolDriftPolicies(ctx)
	if err != nil {
		s.logErr(err, "pool drift policies", r.Request.SystemID)
		return
	}
	var changed bool
	_, _, err = s.updatePower(ctx, r.Request.SystemID, nil, func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
		w := m.Watch
		if w.Observed == "" && w.LastAsk.At.IsZero() {
			w = machine.AdoptPowerWatch(*m, now)
		}
		cfg := s.Drift
		cfg.Policy = machine.ResolveDriftPolicy(m.DriftPolicy, machine.DriftPolicy(pools[m.Pool]))
		reading := machine.Reading{State: r.State, At: now}
		if r.Err != nil {
			reading.Err = r.Err
		}
		w, d := machine.Observe(*m, w, reading, cfg)
		m.Watch = w
		if r.Err == nil && r.State != "" {
			m.PowerState = r.State // the raw reading, as MAAS shows it
		}
		out := machine.ApplyDrift(*m, d, now, s.Config)
		*m, changed = out.Machine, len(out.Events) > 0
		return out.Events, powerAsk{Action: out.Power, Reason: "drift policy: " + m.Watch.Reason}, nil
	})
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.logErr(err, "record power reading", r.Request.SystemID)
		}
		return
	}
	if changed {
		s.Hub.Notify()
	}
}
