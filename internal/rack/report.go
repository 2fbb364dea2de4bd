package rack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/ratelimit"
)

// BootEvent is one step of a machine's boot as the rack saw it: a DHCP
// offer or ack, a file served, a config and the purpose chosen.
type BootEvent struct {
	MAC    string    `json:"mac"`
	UUID   string    `json:"uuid,omitempty"`
	IP     string    `json:"ip,omitempty"`
	Kind   string    `json:"kind"` // dhcp, tftp, http, config
	Detail string    `json:"detail"`
	At     time.Time `json:"at"`
	// Purpose is the boot a config answer gave (kind config only): a
	// local answer to a deploying machine shows its disk is what boots.
	Purpose string `json:"purpose,omitempty"`
	// Repeats is how many more times the same step came within
	// RepeatWindow of this one, which was reported then (see Reporter).
	Repeats int `json:"repeats,omitempty"`
}

// Reporter queues boot events and sends them to the region in batches. It
// never blocks a boot: when the region is away, events wait (up to Max;
// beyond that the oldest are dropped and counted) and go out when it is
// back.
//
// What it keeps is bounded, whoever sends the packets: the same step of
// one MAC within RepeatWindow is one event, followed by one with the
// count of its repeats when the window closes; a known machine's MAC
// reports at most BootEventBurst events at once and BootEventRate a
// second; a MAC no machine has (a discovery to the region) at most
// UnknownBurst and UnknownRate a second per address, and all of them
// UnknownTotalBurst and UnknownTotalRate a second together.
type Reporter struct {
	Max int
	// Known says whether a MAC is a known machine's; nil takes every MAC
	// as known.
	Known func(mac string) bool

	repeats                *ratelimit.Coalescer[BootEvent]
	perMAC, perSource, all *ratelimit.PerKey

	mu      sync.Mutex
	queue   []BootEvent
	dropped int
	limited int
	wake    chan struct{}
}

// The Reporter's bounds (see Reporter).
const (
	RepeatWindow      = time.Minute
	BootEventRate     = 1
	BootEventBurst    = 300
	UnknownRate       = 0.5
	UnknownBurst      = 30
	UnknownTotalRate  = 5
	UnknownTotalBurst = 200
	// limiterKeys bounds each table of MACs or addresses.
	limiterKeys = 10000
)

// NewReporter returns a reporter holding at most max events.
func NewReporter(max int) *Reporter {
	return &Reporter{Max: max, wake: make(chan struct{}, 1),
		repeats:   ratelimit.NewCoalescer[BootEvent](RepeatWindow, limiterKeys),
		perMAC:    ratelimit.New(BootEventRate, BootEventBurst).WithMax(limiterKeys),
		perSource: ratelimit.New(UnknownRate, UnknownBurst).WithMax(limiterKeys),
		all:       ratelimit.New(UnknownTotalRate, UnknownTotalBurst).WithMax(1)}
}

// Add queues an event, unless it repeats a step or goes beyond its MAC's
// or address's bounds; it is cheap and never waits.
func (r *Reporter) Add(e BootEvent) {
	if !r.repeats.First(e.Step(), e) {
		return
	}
	if !r.admit(e) {
		r.mu.Lock()
		r.limited++
		r.mu.Unlock()
		return
	}
	r.enqueue(e)
}

// admit takes the event's tokens: its MAC's when the MAC is a known
// machine's, else its address's and the discoveries' in all. A config's
// purpose is never held back (a local one ends a deployment); folding
// repeats bounds those.
func (r *Reporter) admit(e BootEvent) bool {
	if e.Purpose != "" {
		return true
	}
	if r.Known == nil || r.Known(e.MAC) {
		return r.perMAC.Allow(e.MAC)
	}
	return r.perSource.Allow(e.IP) && r.all.Allow("")
}

// Step names the step an event is: its MAC, kind and detail, without a
// closing parenthesis of sizes, times or status that vary between runs
// of one step.
func (e BootEvent) Step() string {
	d := e.Detail
	if i := strings.LastIndex(d, " ("); i > 0 && strings.HasSuffix(d, ")") {
		d = d[:i]
	}
	return strings.ToLower(e.MAC) + "\x00" + e.Kind + "\x00" + d
}

func (r *Reporter) enqueue(e BootEvent) {
	r.mu.Lock()
	if len(r.queue) >= r.Max {
		r.queue = r.queue[1:]
		r.dropped++
	}
	r.queue = append(r.queue, e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// foldRepeats queues one event for each step that repeated in a window
// now closed, with the count.
func (r *Reporter) foldRepeats() {
	for _, d := range r.repeats.Due() {
		e := d.Value
		e.Repeats, e.At = d.N, d.Last
		r.enqueue(e)
	}
}

// Pending is how many events wait to be sent.
func (r *Reporter) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}

// Run sends queued events until ctx ends.
func (r *Reporter) Run(ctx context.Context, cl *client.Client, log *slog.Logger) {
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-time.After(backoff):
		}
		r.foldRepeats()
		for {
			r.mu.Lock()
			n := min(len(r.queue), 500)
			batch := append([]BootEvent(nil), r.queue[:n]...)
			dropped, limited := r.dropped, r.limited
			r.mu.Unlock()
			if n == 0 {
				break
			}
			b, _ := json.Marshal(batch)
			_, err := cl.Do(ctx, "POST", "rack/", url.Values{"op": {"boot_events"}}, url.Values{"events": {string(b)}})
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("cannot report boot events yet", "pending", r.Pending(), "err", err)
				}
				backoff = min(backoff*2, 30*time.Second)
				break
			}
			backoff = time.Second
			r.mu.Lock()
			r.queue = r.queue[n:]
			if dropped > 0 {
				log.Warn("boot events were dropped while the region was away", "dropped", dropped)
				r.dropped -= dropped
			}
			if limited > 0 {
				log.Warn("boot events beyond their MAC's or address's rate were not reported", "limited", limited)
				r.limited -= limited
			}
			r.mu.Unlock()
		}
	}
}
