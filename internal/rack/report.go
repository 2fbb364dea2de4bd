package rack

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/client"
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
}

// Reporter queues boot events and sends them to the region in batches. It
// never blocks a boot: when the region is away, events wait (up to Max;
// beyond that the oldest are dropped and counted) and go out when it is
// back.
type Reporter struct {
	Max int

	mu      sync.Mutex
	queue   []BootEvent
	dropped int
	wake    chan struct{}
}

// NewReporter returns a reporter holding at most max events.
func NewReporter(max int) *Reporter {
	return &Reporter{Max: max, wake: make(chan struct{}, 1)}
}

// Add queues an event; it is cheap and never waits.
func (r *Reporter) Add(e BootEvent) {
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
		for {
			r.mu.Lock()
			n := min(len(r.queue), 500)
			batch := append([]BootEvent(nil), r.queue[:n]...)
			dropped := r.dropped
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
			r.mu.Unlock()
		}
	}
}
