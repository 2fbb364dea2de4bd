// Package region is the region's application layer: it loads machines from
// the store, asks the domain core (package machine) what an action means,
// stores the outcome with its events in one transaction, and hands power
// work to the coordinator. It speaks no wire protocol; the API calls it.
package region

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// Service acts on machines.
type Service struct {
	Store  store.Store
	Power  *power.Coordinator
	Config machine.Config
	// Drift tunes the drift policy (grace, flap guard); its Policy is
	// resolved per machine.
	Drift machine.DriftConfig
	Hub   *Hub
	// EnlistCommission sends machines that enlist straight on to
	// commissioning instead of powering them off NEW.
	EnlistCommission bool
	// EnlistBMCUser is the user an enlisting environment creates on its
	// IPMI BMC (in-band, fresh password), so that the machine is power
	// managed from the start; empty leaves BMCs alone.
	EnlistBMCUser string
	// LookupHost resolves BMC host names for their canonical identity
	// (net.DefaultResolver.LookupHost when nil; tests set their own).
	LookupHost func(ctx context.Context, host string) ([]string, error)
	Log        *slog.Logger
	Now        func() time.Time
	// LeaseHolder names this region in the leases of singleton work
	// (default: random per process); tests running two regions in one
	// process give each its own.
	LeaseHolder string
	// defaultPoll is the monitor's configured interval (nanoseconds), for
	// PollInterval when no setting overrides it.
	defaultPoll atomic.Int64
	settings    settingsCache
	anon        anonEvents // what anonymous hellos add to timelines
}

// New wires a service; the coordinator reports its results back to it.
// Run the coordinator's workers with s.Power.Run.
func New(st store.Store, drivers power.Registry, cfg machine.Config, pcfg power.Config, log *slog.Logger) *Service {
	s := &Service{Store: st, Config: cfg, Drift: machine.DefaultDriftConfig(), Hub: NewHub(), Log: log, Now: func() time.Time { return time.Now().UTC() }}
	s.Power = power.NewCoordinator(st, drivers, s, pcfg, log)
	return s
}

// Act applies one action to a machine on behalf of actor. A machine the
// actor may not see is reported as not found, as MAAS does.
func (s *Service) Act(ctx context.Context, actor machine.Actor, systemID string, in machine.Input) (_ machine.Machine, _ *store.PowerRequest, err error) {
	defer func() { s.noteNoRack(ctx, systemID, string(in.Action), err) }()
	if in.Action != machine.Deploy {
		return s.act(ctx, actor, systemID, in, actOpts{})
	}
	allocated, err := s.prepareDeployNetwork(ctx, actor, systemID, in)
	if err != nil {
		return machine.Machine{}, nil, err
	}
	m, req, err := s.act(ctx, actor, systemID, in, actOpts{})
	if err != nil && allocated {
		// Unless a deploy that raced this one won: its addresses stay.
		if now, gerr := s.Store.GetMachine(ctx, systemID); gerr != nil || (now.Status != machine.Deploying && now.Status != machine.Deployed) {
			s.logErr(s.Store.ReleaseAutoIPs(ctx, systemID), "release addresses", systemID)
		}
	}
	return m, req, err
}

// actOpts adjust act for the environment's own calls.
type actOpts struct {
	// before runs inside the transaction, before the step; its error
	// aborts the whole change.
	before func(m *machine.Machine) ([]machine.Event, error)
	// noPower skips the power work the step asks for: the machine is
	// already running the environment the step would boot.
	noPower bool
	// results are result files stored in the step's transaction.
	results map[string][]byte
}

func (s *Service) act(ctx context.Context, actor machine.Actor, systemID string, in machine.Input, opts actOpts) (machine.Machine, *store.PowerRequest, error) {
	reason := string(in.Action)
	if in.Comment != "" {
		reason += ": " + in.Comment
	}
	cfg := s.lifecycle(ctx)
	filetype := ""
	if in.Action == machine.Deploy {
		filetype = s.deployFiletype(ctx, actor, systemID, in)
	}
	var from machine.Status
	m, req, err := s.updatePower(ctx, systemID, opts.results, func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
		from = m.Status
		if !machine.CanView(actor, m) {
			return nil, powerAsk{}, fmt.Errorf("machine %s: %w", systemID, store.ErrNotFound)
		}
		var pre []machine.Event
		if opts.before != nil {
			var err error
			if pre, err = opts.before(m); err != nil {
				return nil, powerAsk{}, err
			}
		}
		in.Actor, in.Now = actor, s.Now()
		o, err := machine.Step(*m, in, cfg)
		if err != nil {
			return nil, powerAsk{}, err
		}
		if in.Action == machine.Deploy && o.Machine.Status == machine.Deploying {
			if err := prepareDeployStorage(&o.Machine, filetype); err != nil {
				return nil, powerAsk{}, err
			}
		}
		o.Machine.Watch = machine.NoteStep(o.Machine.Watch, in, o)
		*m = o.Machine
		ask := powerAsk{Action: o.Power, By: actor.Name, Reason: reason}
		if opts.noPower {
			ask.Action = machine.PowerNone
		}
		return append(pre, o.Events...), ask, nil
	})
	if err != nil {
		return machine.Machine{}, nil, err
	}
	if m.Status != from {
		// A machine token lives for the phase it was issued in: a deployed
		// OS's token must not come back to life when the machine is
		// deployed again.
		s.logErr(s.Store.DeleteMachineTokens(ctx, systemID), "revoke machine tokens", systemID)
		if from == machine.Commissioning || from == machine.Testing {
			// Whatever had not ended (aborted, failed or timed out phase)
			// will not: the environment is gone.
			s.logErr(s.AbortScripts(ctx, systemID), "abort script results", systemID)
		}
	}
	s.Hub.Notify()
	return m, req, nil
}

// update is Store.UpdateMachine with the region's invariants kept after
// every change: a machine in a netbooting phase has an enrolment secret
// for its boot, and one outside such a phase has none and no wrong boots.
func (s *Service) update(ctx context.Context, systemID string, fn store.UpdateFunc) (machine.Machine, error) {
	return s.updateWith(ctx, systemID, nil, fn)
}

// updateWith is update that also stores result files, when there are
// any, in the same transaction.
func (s *Service) updateWith(ctx context.Context, systemID string, results map[string][]byte, fn store.UpdateFunc) (machine.Machine, error) {
	var from machine.Status
	keep := func(m *machine.Machine) ([]machine.Event, error) {
		from = m.Status
		evs, err := fn(m)
		if err != nil {
			return nil, err
		}
		keepEnrol(m)
		return evs, nil
	}
	var m machine.Machine
	var err error
	if len(results) > 0 {
		m, err = s.Store.UpdateMachineWithResults(ctx, systemID, results, keep)
	} else {
		m, err = s.Store.UpdateMachine(ctx, systemID, keep)
	}
	if err == nil {
		s.noteStatus(ctx, from, m)
	}
	return m, err
}

// ExpireDue fails every machine whose monitored status has run out. Each
// machine is re-checked inside its own transaction, so several regions may
// run this at once and a machine that just made progress is left alone.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	now := s.Now()
	ids, err := s.Store.ExpiredMachines(ctx, now)
	if err != nil {
		return 0, fmt.Errorf("list expired machines: %w", err)
	}
	failed, cfg := 0, s.lifecycle(ctx)
	for _, id := range ids {
		expired := false
		_, _, err := s.updatePower(ctx, id, nil, func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
			out, ok := machine.Expire(*m, now, cfg)
			if !ok {
				return nil, powerAsk{}, nil
			}
			*m, expired = out.Machine, true
			return out.Events, powerAsk{Action: out.Power, Reason: "status timeout"}, nil
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return failed, fmt.Errorf("expire %s: %w", id, err)
		}
		if expired {
			failed++
		}
	}
	if failed > 0 {
		s.Hub.Notify()
	}
	return failed, nil
}

// RunMonitor calls ExpireDue every interval until ctx ends, in the
// region holding the "status-monitor" lease.
func (s *Service) RunMonitor(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !s.leads(ctx, "status-monitor", interval) {
				continue
			}
			n, err := s.ExpireDue(ctx)
			if err != nil && ctx.Err() == nil {
				s.Log.Error("status monitor", "err", err)
			} else if n > 0 {
				s.Log.Info("status monitor failed timed-out machines", "count", n)
			}
		}
	}
}

func (s *Service) record(ctx context.Context, m machine.Machine, level machine.Level, typ, text string) {
	err := s.Store.AppendEvents(ctx, machine.Event{
		SystemID: m.SystemID, Hostname: m.Hostname, Type: typ, Level: level, Description: text, Created: s.Now(),
	})
	s.logErr(err, "record event", m.SystemID)
	s.Hub.Notify()
}

func (s *Service) logErr(err error, what, id string) {
	if err != nil {
		s.Log.Error(what, "system_id", id, "err", err)
	}
}
