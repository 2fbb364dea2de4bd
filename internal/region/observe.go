package region

import (
	"context"
	"errors"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// observe feeds a power reading to the drift policy (machine.Observe): the
// reading, its events, a failed phase and a correction are one change,
// stored with the query's end.
func (s *Service) observe(ctx context.Context, r power.Result) power.Record {
	if errors.Is(r.Err, power.ErrUnsupported) {
		return power.Record{} // nothing can be learnt; the monitor skips such machines
	}
	now := s.Now()
	pools, err := s.Store.PoolDriftPolicies(ctx)
	if err != nil {
		s.logErr(err, "pool drift policies", r.Request.SystemID)
		return power.Record{}
	}
	changed := false
	return power.Record{
		Change: s.withPower(func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
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
		}),
		Done: func(m machine.Machine, next *store.PowerRequest) { s.recorded(changed)(m, next) },
	}
}
