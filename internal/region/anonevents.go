package region

import (
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/ratelimit"
)

// What anonymous hellos may add to a machine's timeline (an uncorroborated
// boot, a held enlistment): a hello is anyone's word, and without bounds
// each one, from any number of addresses, would add a line. One event
// repeated from one address within AnonEventWindow is recorded once, and
// a machine gets at most AnonEventBurst of them at once and
// AnonEventRate a second.
const (
	AnonEventWindow = time.Minute
	AnonEventBurst  = 30
	AnonEventRate   = 1.0 / 6
)

// anonEvents bounds the events anonymous hellos cause.
type anonEvents struct {
	once       sync.Once
	steps      *ratelimit.Coalescer[struct{}]
	perMachine *ratelimit.PerKey
}

// first says whether an event of typ on machine systemID, caused from
// source and what names it, is to be recorded: the first of its window,
// within the machine's bound.
func (a *anonEvents) first(systemID, source, typ, what string) bool {
	a.once.Do(func() {
		a.steps = ratelimit.NewCoalescer[struct{}](AnonEventWindow, 10000)
		a.perMachine = ratelimit.New(AnonEventRate, AnonEventBurst).WithMax(10000)
	})
	return a.steps.First(systemID+"\x00"+source+"\x00"+typ+"\x00"+what, struct{}{}) && a.perMachine.Allow(systemID)
}

// keep is the events of an untrusted hello from source that are to be
// recorded.
func (a *anonEvents) keep(evs []machine.Event, systemID, source string) []machine.Event {
	var out []machine.Event
	for _, e := range evs {
		if a.first(systemID, source, e.Type, e.Description) {
			out = append(out, e)
		}
	}
	return out
}
