package api

import (
	"fmt"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/ratelimit"
)

// bootBounds bound what a region keeps of the boot events racks report,
// whatever a rack did before (anonymous boot traffic is behind each
// event): one step of one machine within rack.RepeatWindow is one event;
// a machine gets at most rack.BootEventBurst events at once and
// rack.BootEventRate a second; a rack lists MACs no machine has as
// discoveries at most rack.UnknownBurst at once and rack.UnknownRate a
// second per address, and rack.UnknownTotalBurst and
// rack.UnknownTotalRate a second in all. Each region counts its own.
type bootBounds struct {
	steps                       *ratelimit.Coalescer[struct{}]
	perMachine, perSource, rack *ratelimit.PerKey
}

const boundKeys = 10000

func newBootBounds() *bootBounds {
	return &bootBounds{
		steps:      ratelimit.NewCoalescer[struct{}](rack.RepeatWindow, boundKeys),
		perMachine: ratelimit.New(rack.BootEventRate, rack.BootEventBurst).WithMax(boundKeys),
		perSource:  ratelimit.New(rack.UnknownRate, rack.UnknownBurst).WithMax(boundKeys),
		rack:       ratelimit.New(rack.UnknownTotalRate, rack.UnknownTotalBurst).WithMax(boundKeys),
	}
}

// event says whether to record e on machine systemID, and the
// description to record it with. A rack's count of repeats is recorded
// as such: it never repeats a step the region folded.
func (b *bootBounds) event(systemID string, e rack.BootEvent, desc string) (string, bool) {
	if e.Repeats > 0 {
		desc = truncate(desc, 440) + fmt.Sprintf(" (and %d more times within %s)", e.Repeats, rack.RepeatWindow)
	} else if !b.steps.First(systemID+"\x00"+e.Step(), struct{}{}) {
		return "", false
	}
	return desc, b.perMachine.Allow(systemID)
}

// discovery says whether to note e, a MAC no machine has, from the rack
// known by rackKey.
func (b *bootBounds) discovery(rackKey string, e rack.BootEvent) bool {
	return b.perSource.Allow(rackKey+"\x00"+e.IP) && b.rack.Allow(rackKey)
}

// rackKey names the rack a request comes from, for its bounds.
func rackKey(r *request) string {
	if c := r.who.rack; c != nil {
		return "rack " + c.RackID
	}
	if u := r.who.user; u != nil {
		return "user " + u.Name
	}
	return "anonymous"
}
