package region

import (
	"context"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/store"
)

// powerAsk is the power command a change implies (Action PowerNone: none).
type powerAsk struct {
	Action     machine.PowerAction
	By, Reason string
}

// powerFunc changes a machine and says what power command that implies.
type powerFunc func(m *machine.Machine) ([]machine.Event, powerAsk, error)

// updatePower is updateWith for a change that may imply a power command:
// the change, its events and the command's request commit in one
// transaction (store.UpdateMachinePower), so no crash can leave a machine
// in a phase that waits on a power command nobody queued.
func (s *Service) updatePower(ctx context.Context, systemID string, results map[string][]byte, fn powerFunc) (machine.Machine, *store.PowerRequest, error) {
	var from machine.Status
	m, req, _, err := s.Store.UpdateMachinePower(ctx, systemID, results, s.withPower(func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
		from = m.Status
		return fn(m)
	}))
	if err != nil {
		return machine.Machine{}, nil, err
	}
	s.noteStatus(ctx, from, m)
	if req != nil {
		s.Power.Queued(*req)
	}
	return m, req, nil
}

// withPower turns a powerFunc into the store's form: the region's
// invariants kept (keepEnrol) and the asked command built as a request. A
// machine whose BMC cannot be addressed keeps the change, with the reason
// as an event in the same transaction; the phase's timeout then fails it.
func (s *Service) withPower(fn powerFunc) store.PowerUpdateFunc {
	return func(m *machine.Machine) ([]machine.Event, *store.PowerRequest, error) {
		evs, ask, err := fn(m)
		if err != nil {
			return nil, nil, err
		}
		keepEnrol(m)
		if ask.Action == machine.PowerNone {
			return evs, nil, nil
		}
		r, err := s.Power.Request(*m, ask.Action, ask.By, ask.Reason)
		if noRack := (*powerroute.NoRackError)(nil); errors.As(err, &noRack) {
			return nil, nil, err // refused at once: nothing changes (Act records why)
		}
		if err != nil {
			return append(evs, machine.Event{
				SystemID: m.SystemID, Hostname: m.Hostname, Type: "Power failed", Level: machine.LevelError,
				Description: fmt.Sprintf("could not queue power %s: %v", ask.Action, err), Created: s.Now(),
			}), nil, nil
		}
		return evs, &r, nil
	}
}

// PowerResult says what a finished power command changes on its machine:
// the event and the lifecycle step it implies (machine.ApplyPower), or for
// a query the drift policy's decision (observe). It implements
// power.Reporter: the coordinator stores the change in the transaction
// that ends the request, so that a crash between the two cannot leave a
// machine in Releasing after its power-off was recorded.
func (s *Service) PowerResult(ctx context.Context, r power.Result) power.Record {
	action := machine.PowerAction(r.Request.Action)
	if action == power.QueryAction {
		return s.observe(ctx, r)
	}
	report := machine.PowerReport{
		Action: action, State: r.State, Err: r.Err, User: r.Request.RequestedBy, Duration: r.Duration, Now: s.Now(),
	}
	if r.Resumed != "" {
		report.Note = resumeNote(r.Resumed)
	}
	return power.Record{
		Change: s.withPower(func(m *machine.Machine) ([]machine.Event, powerAsk, error) {
			out := machine.ApplyPower(*m, report, s.Config)
			*m = out.Machine
			return out.Events, powerAsk{Action: out.Power, Reason: "after power " + string(action)}, nil
		}),
		Done: s.recorded(true),
	}
}

// recorded is what follows a stored result: pages are told when anything
// they show changed, and the coordinator learns of the command the result
// queued.
func (s *Service) recorded(changed bool) func(machine.Machine, *store.PowerRequest) {
	return func(_ machine.Machine, next *store.PowerRequest) {
		if next != nil {
			s.Power.Queued(*next)
		}
		if changed || next != nil {
			s.Hub.Notify()
		}
	}
}

// resumeNote explains, in the machine's event, a command that was re-run
// after the region running it stopped.
func resumeNote(step power.Step) string {
	switch step {
	case power.StepDone:
		return "re-run after the region running it stopped: the BMC already reported the wanted state, so the command was not sent again"
	case power.StepOn, power.StepNetOn:
		return "re-run after the region running it stopped: the machine was off, so it was powered on rather than cycled again"
	}
	return "re-run after the region running it stopped"
}
