package region

import (
	"context"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// ErrNoMatch means no free machine satisfies the constraints.
var ErrNoMatch = errors.New("no machine matches the constraints")

// Allocate takes the first free Ready machine matching f for actor. Several
// allocators (in this process or other regions) may race for the same
// candidates: each attempt re-checks the machine inside its transaction, and
// a loser simply moves on to the next candidate.
func (s *Service) Allocate(ctx context.Context, actor machine.Actor, f store.MachineFilter, comment string) (machine.Machine, error) {
	f.Statuses = []machine.Status{machine.Ready}
	f.Owners = []string{""}
	f.VisibleTo = ""
	candidates, err := s.Store.ListMachines(ctx, f)
	if err != nil {
		return machine.Machine{}, fmt.Errorf("find candidates: %w", err)
	}
	for _, c := range candidates {
		m, _, err := s.Act(ctx, actor, c.SystemID, machine.Input{Action: machine.Allocate, Comment: comment})
		var te *machine.TransitionError
		switch {
		case err == nil:
			return m, nil
		case errors.As(err, &te), errors.Is(err, store.ErrNotFound):
			continue // taken or deleted since the list; try the next
		default:
			return machine.Machine{}, err
		}
	}
	return machine.Machine{}, ErrNoMatch
}
