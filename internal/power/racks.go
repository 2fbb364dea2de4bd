package power

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/store"
)

// Racks run commands when Config.Racks is set: each claims, through the
// region's API, requests for the BMCs it reaches (ClaimFor), renews its
// lease while it works (Renew), says when a command may reach the BMC
// (Sent) and reports how it ended (Report), which the region applies
// exactly as its own workers' results. The queue, its serialisation and
// the lease janitor stay in the region, on the database.

// RackClaim is a rack asking for work.
type RackClaim struct {
	ID       string // the rack's own id; its leases are held as RackOwner(ID)
	Hostname string
	// SystemID is an enrolled rack's id in the region: its claims show
	// it alive.
	SystemID string
	Networks []netip.Prefix // the BMC networks it declares
	// Unreachable are BMC hosts its probe failed on lately: it is given
	// none of their requests while it says so.
	Unreachable map[string]bool
}

// Claimed is a request handed to a rack with what running it takes.
type Claimed struct {
	Request   store.PowerRequest
	PowerType string
	Params    map[string]string
	Lease     time.Duration
}

// RackResult is how a rack says a command ended.
type RackResult struct {
	State    machine.PowerState
	Error    string // "" when it succeeded
	Kind     Kind
	Duration time.Duration
	Resumed  Step
}

// RackOwner is the lease owner of a rack's claims.
func RackOwner(id string) string { return "rack:" + id }

// LeaseError is a rack acting on a request it does not hold: its lease ran
// out and the request was taken back, it is another rack's, or it ended.
type LeaseError struct{ ID, Why string }

func (e *LeaseError) Error() string {
	return fmt.Sprintf("power request %s is not held by this rack: %s", e.ID, e.Why)
}

// RemoteError is a failure a rack reported, with its text and kind as the
// rack's driver classified it.
type RemoteError struct {
	Kind Kind
	Text string
}

func (e *RemoteError) Error() string { return e.Text }

// Is lets errors.Is(err, ErrUnsupported) match an unsupported failure.
func (e *RemoteError) Is(target error) bool { return target == ErrUnsupported && e.Kind == Unsupported }

// Kinds are the failure kinds a rack may report.
var Kinds = []Kind{Unreachable, AuthRefused, Timeout, Unsupported, BMCError, BadParams}

// Steps are the resume steps a rack may report.
var Steps = []Step{StepDone, StepOn, StepNetOn, StepRepeat, StepUnknown}

// rackTouchEvery paces the writes recording that a long-polling rack is
// still there: often enough that it stays live (RackLive) between them.
func (c *Coordinator) rackTouchEvery() time.Duration { return c.cfg.RackLive / 4 }

// noteRack records the rack as live with its networks, at most every
// rackTouchEvery for the same networks: a rack's claimers all call it.
func (c *Coordinator) noteRack(ctx context.Context, k RackClaim) error {
	nets := powerroute.Strings(k.Networks)
	key := k.Hostname + " " + strings.Join(nets, ",")
	now := c.now()
	c.mu.Lock()
	last, ok := c.rackNoted[k.ID]
	fresh := ok && last.key == key && now.Sub(last.at) < c.rackTouchEvery()
	if !fresh {
		c.rackNoted[k.ID] = rackNote{key: key, at: now}
	}
	c.mu.Unlock()
	if fresh {
		return nil
	}
	if err := c.q.NoteRackPower(ctx, store.RackPower{ID: k.ID, Hostname: k.Hostname, SystemID: k.SystemID, Networks: nets, Seen: now}); err != nil {
		c.mu.Lock()
		delete(c.rackNoted, k.ID)
		c.mu.Unlock()
		return err
	}
	if !ok || last.key != key {
		c.forgetRacks() // a new rack or new networks: routable at once
	}
	return nil
}

// rackNote is when a rack was last recorded, with what.
type rackNote struct {
	key string
	at  time.Time
}

// ClaimFor hands the rack the next request it may run, waiting up to wait
// for one; store.ErrNotFound when none came. Every call also records the
// rack as live with its networks, which is how the region knows where
// requests can go.
func (c *Coordinator) ClaimFor(ctx context.Context, k RackClaim, wait time.Duration) (Claimed, error) {
	owner := RackOwner(k.ID)
	deadline := c.now().Add(wait)
	filter := func(r store.PowerRequest) bool { return powerroute.Claimable(k.Networks, k.Unreachable, r.BMCKey) }
	if powerroute.ReachesAll(k.Networks) && len(k.Unreachable) == 0 {
		filter = nil // the database's first runnable request is the rack's
	}
	for {
		if err := c.noteRack(ctx, k); err != nil {
			return Claimed{}, err
		}
		signal := c.queuedSignal()
		now := c.now()
		r, err := c.q.ClaimPowerWhere(ctx, owner, now, now.Add(c.cfg.Lease), filter)
		if err == nil {
			cl, ok := c.handOut(ctx, r)
			if ok {
				return cl, nil
			}
			continue
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Claimed{}, err
		}
		left := deadline.Sub(c.now())
		if left <= 0 {
			return Claimed{}, err
		}
		select {
		case <-ctx.Done():
			return Claimed{}, ctx.Err()
		case <-signal:
		case <-time.After(min(left, c.cfg.Poll)):
		}
	}
}

// handOut reads what the rack needs to run r. A request whose machine or
// driver is gone cannot run anywhere: it fails here, as a region's worker
// fails it.
func (c *Coordinator) handOut(ctx context.Context, r store.PowerRequest) (Claimed, bool) {
	m, err := c.q.GetMachine(ctx, r.SystemID)
	if err == nil {
		if _, err = c.drivers.Lookup(m.PowerType); err == nil {
			return Claimed{Request: r, PowerType: m.PowerType, Params: m.PowerParams, Lease: c.cfg.Lease}, true
		}
	}
	cause := &Error{Kind: BadParams, Op: r.Action, Err: err}
	_ = c.finish(Result{Request: Ended(r, machine.PowerUnknown, cause, c.now()), State: machine.PowerUnknown, Err: cause})
	return Claimed{}, false
}

// held is request id if the rack holds it.
func (c *Coordinator) held(ctx context.Context, rackID, id string) (store.PowerRequest, error) {
	r, err := c.q.GetPowerRequest(ctx, id)
	if err != nil {
		return r, err
	}
	switch {
	case r.State != store.PowerRunning:
		return r, &LeaseError{ID: id, Why: "it is " + r.State}
	case r.LeaseOwner != RackOwner(rackID):
		return r, &LeaseError{ID: id, Why: "its lease was lost or it is another rack's"}
	}
	return r, nil
}

// lost turns the store's "not running under this lease" into a LeaseError.
func lost(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &LeaseError{ID: id, Why: "its lease was lost"}
	}
	return err
}

// Renew moves the rack's lease on request id on and returns its length.
// A renewal shows the rack live, as a claim does.
func (c *Coordinator) Renew(ctx context.Context, rackID, id string) (time.Duration, error) {
	if _, err := c.held(ctx, rackID, id); err != nil {
		return 0, err
	}
	if err := c.q.ExtendPowerLease(ctx, id, RackOwner(rackID), c.now().Add(c.cfg.Lease)); err != nil {
		return 0, lost(id, err)
	}
	c.touchRack(ctx, rackID)
	return c.cfg.Lease, nil
}

// touchRack records a rack that renews a lease as live. A rack whose
// every slot runs a command asks for no work until one ends, which for
// commands to slow or dead BMCs may take minutes; counted as gone
// meanwhile, it would have the requests for all its BMCs refused while
// it works. It is written at most every rackTouchEvery, as claims are,
// from the rack's row in the database, so a region that has not seen
// the rack's claims (it restarted since) keeps it live too.
func (c *Coordinator) touchRack(ctx context.Context, rackID string) {
	now := c.now()
	c.mu.Lock()
	last, ok := c.rackNoted[rackID]
	c.mu.Unlock()
	if ok && now.Sub(last.at) < c.rackTouchEvery() {
		return
	}
	rows, err := c.q.RackPowers(ctx, now.Add(-24*time.Hour))
	if err != nil {
		c.log.Warn("read power racks", "err", err)
		return
	}
	for _, r := range rows {
		if r.ID != rackID {
			continue
		}
		r.Seen = now
		if err := c.q.NoteRackPower(ctx, r); err != nil {
			c.log.Warn("note power rack", "rack_id", rackID, "err", err)
			return
		}
		c.mu.Lock()
		c.rackNoted[rackID] = rackNote{key: r.Hostname + " " + strings.Join(r.Networks, ","), at: now}
		c.mu.Unlock()
		return
	}
}

// Sent records that the rack is about to send request id's command.
func (c *Coordinator) Sent(ctx context.Context, rackID, id string) error {
	if _, err := c.held(ctx, rackID, id); err != nil {
		return err
	}
	return lost(id, c.q.MarkPowerSent(ctx, id, RackOwner(rackID), c.now()))
}

// Release gives back a request the rack cannot run (its probe found the
// BMC unreachable) before anything was sent, for another rack to claim.
func (c *Coordinator) Release(ctx context.Context, rackID, id string) error {
	r, err := c.held(ctx, rackID, id)
	if err != nil {
		return err
	}
	if !r.Sent.IsZero() {
		return &LeaseError{ID: id, Why: "its command may have reached the BMC; report how it ended instead"}
	}
	if err := c.q.ReleasePower(ctx, id, RackOwner(rackID)); err != nil {
		return lost(id, err)
	}
	c.kick()
	return nil
}

// Report ends request id as the rack says, through the same Reporter and
// transaction as a region's own workers.
func (c *Coordinator) Report(ctx context.Context, rackID, id string, res RackResult) error {
	r, err := c.held(ctx, rackID, id)
	if err != nil {
		return err
	}
	var cause error
	if res.Error != "" {
		cause = &RemoteError{Kind: res.Kind, Text: res.Error}
	}
	out := Result{Request: Ended(r, res.State, cause, c.now()), State: res.State, Err: cause, Duration: res.Duration, Resumed: res.Resumed}
	if err := c.finish(out); err != nil {
		return lost(id, err)
	}
	return nil
}

// Routable says whether a request for the BMC can run: always when this
// region runs commands itself, else when a live rack reaches the BMC
// (a *powerroute.NoRackError when none does). Racks are read from the
// database, at most once a second.
func (c *Coordinator) Routable(ctx context.Context, bmcKey string) error {
	if !c.cfg.Racks {
		return nil
	}
	racks, err := c.liveRacks(ctx)
	if err != nil {
		// Not knowing is no reason to refuse: the request waits for a rack.
		c.log.Warn("read power racks", "err", err)
		return nil
	}
	return powerroute.Route(racks, bmcKey)
}

// Reachable says whether a BMC no administrator gave (one an enlisting
// machine reports) may be used: when this region runs commands itself,
// or when a live rack may act on its network (what it declares, narrowed
// to what it was granted and serves). Unlike Routable it refuses when
// the racks cannot be read.
func (c *Coordinator) Reachable(ctx context.Context, bmcKey string) error {
	if !c.cfg.Racks {
		return nil
	}
	racks, err := c.liveRacks(ctx)
	if err != nil {
		return fmt.Errorf("read power racks: %w", err)
	}
	return powerroute.Route(racks, bmcKey)
}

func (c *Coordinator) liveRacks(ctx context.Context) ([]powerroute.Rack, error) {
	now := c.now()
	c.mu.Lock()
	if !c.racksAt.IsZero() && now.Sub(c.racksAt) < time.Second {
		rs := c.racks
		c.mu.Unlock()
		return rs, nil
	}
	c.mu.Unlock()
	rows, err := c.q.RackPowers(ctx, now.Add(-c.cfg.RackLive))
	if err != nil {
		return nil, err
	}
	rs := make([]powerroute.Rack, 0, len(rows))
	for _, row := range rows {
		nets, err := powerroute.ParseNetworks(row.Networks)
		if err != nil {
			continue // stored by a claim that checked them; never here
		}
		rs = append(rs, powerroute.Rack{ID: row.ID, Networks: nets, Seen: row.Seen})
	}
	rs = powerroute.Live(rs, now, c.cfg.RackLive)
	c.mu.Lock()
	c.racks, c.racksAt = rs, now
	c.mu.Unlock()
	return rs, nil
}

// forgetRacks drops the cached racks, so that a rack's first claim makes
// its networks routable at once in this process.
func (c *Coordinator) forgetRacks() {
	c.mu.Lock()
	c.racksAt = time.Time{}
	c.mu.Unlock()
}

// queuedSignal is closed at the next kick: a waiting claim wakes when a
// request is queued or released in this process.
func (c *Coordinator) queuedSignal() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.signal == nil {
		c.signal = make(chan struct{})
	}
	return c.signal
}
