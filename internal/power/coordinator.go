package power

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/powerroute"
	"github.com/anvilmetal/anvil/internal/store"
)

// QueryAction is a power query; it travels through the same queue as the
// actions so that a query never overlaps a command on the same BMC.
const QueryAction machine.PowerAction = "query"

// Queue is the part of the store that holds the power queue. The queue
// lives in the database, so its rules hold across region processes.
type Queue interface {
	EnqueuePower(ctx context.Context, r store.PowerRequest) (store.PowerRequest, bool, error)
	ClaimPower(ctx context.Context, owner string, now, leaseUntil time.Time) (store.PowerRequest, error)
	ClaimPowerWhere(ctx context.Context, owner string, now, leaseUntil time.Time, ok func(store.PowerRequest) bool) (store.PowerRequest, error)
	ReleasePower(ctx context.Context, id, owner string) error
	NoteRackPower(ctx context.Context, r store.RackPower) error
	RackPowers(ctx context.Context, since time.Time) ([]store.RackPower, error)
	ExtendPowerLease(ctx context.Context, id, owner string, until time.Time) error
	FinishPower(ctx context.Context, r store.PowerRequest) error
	FinishPowerWith(ctx context.Context, r store.PowerRequest, fn store.PowerUpdateFunc) (machine.Machine, *store.PowerRequest, error)
	MarkPowerSent(ctx context.Context, id, owner string, at time.Time) error
	ExpirePowerLeases(ctx context.Context, now time.Time, maxAttempts int) ([]store.PowerRequest, error)
	GetPowerRequest(ctx context.Context, id string) (store.PowerRequest, error)
	PowerQueue(ctx context.Context, systemID string) ([]store.PowerRequest, error)
	PrunePower(ctx context.Context, before time.Time) (int, error)
	GetMachine(ctx context.Context, systemID string) (machine.Machine, error)
}

// Result is how a request ended.
type Result struct {
	Request  store.PowerRequest
	State    machine.PowerState // what the BMC reported afterwards; unknown if it cannot tell
	Err      error
	Duration time.Duration
	// Resumed is the step a re-run took (see Resume); "" for a first run.
	Resumed Step
}

// Reporter turns every result into a change of its machine; the region
// records it there.
type Reporter interface {
	PowerResult(ctx context.Context, r Result) Record
}

// Record is what a result changes. Change runs in the transaction that
// ends the request, so a command's end and the lifecycle step it implies
// (and the command that step asks for) are stored together or not at all;
// nil changes nothing. Done, when set, runs after that commit with the
// machine as stored (zero if it is gone) and the request Change queued.
type Record struct {
	Change store.PowerUpdateFunc
	Done   func(m machine.Machine, next *store.PowerRequest)
}

// Config tunes the coordinator.
type Config struct {
	// Workers caps the BMC commands this process runs at once.
	Workers int
	// CommandTimeout bounds one attempt, verification included.
	CommandTimeout time.Duration
	// QueryTimeout bounds a query, which is tried once: the monitor's next
	// poll is its retry, and a dead BMC must not hold a worker for long.
	QueryTimeout time.Duration
	// Attempts is how often a command is tried when the BMC was
	// unreachable or slow; refusals (auth, unsupported) are not retried.
	Attempts int
	// Lease is how long a claimed command stays ours without renewal; a
	// region that dies loses its commands to the others after this.
	Lease time.Duration
	// Poll is how often idle workers look for work queued elsewhere.
	Poll time.Duration
	// Backoff paces verification queries.
	Backoff []time.Duration
	// Racks has racks run the commands (see racks.go): this process runs
	// none itself, and a request for a BMC no live rack reaches is
	// refused when it is asked for.
	Racks bool
	// RackLive is how long a rack counts as live after it last asked for
	// work; a rack long-polls, so it asks at least every claim wait.
	RackLive time.Duration
}

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = 16
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = 2 * time.Minute
	}
	if c.QueryTimeout <= 0 {
		c.QueryTimeout = 10 * time.Second
	}
	if c.Attempts <= 0 {
		c.Attempts = 3
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 250 * time.Millisecond
	}
	if c.Backoff == nil {
		c.Backoff = Backoff
	}
	if c.RackLive <= 0 {
		c.RackLive = 45 * time.Second
	}
}

// Coordinator queues power commands in the database and runs them: one at
// a time per machine and per BMC, equal requests coalesced, in arrival
// order, with bounded retries. Every region runs one; they share the queue.
type Coordinator struct {
	q        Queue
	drivers  Registry
	reporter Reporter
	cfg      Config
	owner    string
	log      *slog.Logger
	now      func() time.Time

	wake    chan struct{}
	mu      sync.Mutex
	waiters map[string][]chan struct{}
	// queries are the queries this process queued that are not known to
	// have finished, by machine (see pendingQuery).
	queries map[string]pendingQuery
	// doneQueries are queries reported finished, kept briefly for Submit
	// in case a worker finishes one before Submit has noted it.
	doneQueries map[string]bool
	// signal is closed at the next kick, for racks' claims waiting here.
	signal chan struct{}
	// racks are the live racks as last read, at racksAt (Routable).
	racks   []powerroute.Rack
	racksAt time.Time
	// rackNoted is when each rack was last recorded live (noteRack).
	rackNoted map[string]rackNote
}

// pendingQuery is a query request and when it was last known to be
// queued or running.
type pendingQuery struct {
	r    store.PowerRequest
	seen time.Time
}

// NewCoordinator returns a coordinator; Run starts its workers.
func NewCoordinator(q Queue, drivers Registry, reporter Reporter, cfg Config, log *slog.Logger) *Coordinator {
	cfg.defaults()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Coordinator{
		q: q, drivers: drivers, reporter: reporter, cfg: cfg, log: log, now: time.Now,
		owner: "region-" + hex.EncodeToString(b[:]), wake: make(chan struct{}, 1), waiters: map[string][]chan struct{}{},
		queries: map[string]pendingQuery{}, doneQueries: map[string]bool{}, rackNoted: map[string]rackNote{},
	}
}

// Drivers returns the registry, for validating parameters.
func (c *Coordinator) Drivers() Registry { return c.drivers }

// BMCOf names the BMC a machine's commands are serialised on.
func (c *Coordinator) BMCOf(m machine.Machine) (BMC, error) {
	d, err := c.drivers.Lookup(m.PowerType)
	if err != nil {
		return BMC{}, err
	}
	return d.BMC(m.PowerParams)
}

// Submit queues action for m. An equal request already queued or running
// is returned instead (coalesced), so a burst of identical asks costs one
// BMC command.
//
// A query for a machine whose last query from this process is still
// pending is coalesced without a write to the database: when the workers
// fall behind (dead or slow BMCs, a fleet larger than the limits allow in
// an interval), the monitor asks again for every machine that is due, and
// each of those asks used to cost a write transaction that ended in
// coalescing anyway (46% of the region's CPU in a 10,000-machine sweep).
func (c *Coordinator) Submit(ctx context.Context, m machine.Machine, action machine.PowerAction, by, reason string) (store.PowerRequest, bool, error) {
	req, err := c.Request(m, action, by, reason)
	if err != nil {
		return store.PowerRequest{}, false, err
	}
	if action == QueryAction {
		if r, ok := c.pendingQuery(ctx, m.SystemID); ok {
			return r, true, nil
		}
	} else {
		// A query queued from now on must go behind this action.
		c.forgetQuery(m.SystemID, "")
	}
	r, coalesced, err := c.q.EnqueuePower(ctx, req)
	if err != nil {
		return r, false, err
	}
	if action == QueryAction && (r.State == store.PowerQueued || r.State == store.PowerRunning) {
		c.mu.Lock()
		if !c.doneQueries[r.ID] {
			c.queries[m.SystemID] = pendingQuery{r: r, seen: c.now()}
		}
		c.mu.Unlock()
	}
	c.kick()
	return r, coalesced, nil
}

// Request builds the request for action on m without queueing it, for a
// caller that stores it in the transaction of the change implying it
// (store.UpdateMachinePower); call Queued once that has committed.
func (c *Coordinator) Request(m machine.Machine, action machine.PowerAction, by, reason string) (store.PowerRequest, error) {
	bmc, err := c.BMCOf(m)
	if err != nil {
		return store.PowerRequest{}, fmt.Errorf("power %s %s: %w", action, m.SystemID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Routable(ctx, bmc.Key()); err != nil {
		return store.PowerRequest{}, err
	}
	return store.PowerRequest{
		SystemID: m.SystemID, BMCKey: bmc.Key(), Action: string(action), RequestedBy: by, Reason: reason, Created: c.now(),
	}, nil
}

// Queued tells the coordinator that r was committed to the queue by
// another transaction: workers wake, and a query queued after it goes
// behind it.
func (c *Coordinator) Queued(r store.PowerRequest) {
	if machine.PowerAction(r.Action) != QueryAction {
		c.forgetQuery(r.SystemID, "")
	}
	c.kick()
}

// pendingQuery returns the query this process last queued for the machine
// if it is still queued or running. Queries this process runs are
// forgotten when they finish (report); one that another region ran is
// checked in the database, with a read, once per lease period.
func (c *Coordinator) pendingQuery(ctx context.Context, systemID string) (store.PowerRequest, bool) {
	c.mu.Lock()
	p, ok := c.queries[systemID]
	c.mu.Unlock()
	if !ok {
		return store.PowerRequest{}, false
	}
	now := c.now()
	if now.Sub(p.seen) < c.cfg.Lease {
		return p.r, true
	}
	r, err := c.q.GetPowerRequest(ctx, p.r.ID)
	if err != nil || (r.State != store.PowerQueued && r.State != store.PowerRunning) {
		c.forgetQuery(systemID, p.r.ID)
		return store.PowerRequest{}, false
	}
	c.mu.Lock()
	if q, ok := c.queries[systemID]; ok && q.r.ID == r.ID {
		c.queries[systemID] = pendingQuery{r: r, seen: now}
	}
	c.mu.Unlock()
	return r, true
}

// forgetQuery drops the machine's pending query: any if id is "", else
// only that one.
func (c *Coordinator) forgetQuery(systemID, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.queries[systemID]; ok && (id == "" || p.r.ID == id) {
		delete(c.queries, systemID)
	}
}

// Do submits and waits for the request to finish: the synchronous form
// that queries use.
func (c *Coordinator) Do(ctx context.Context, m machine.Machine, action machine.PowerAction, by, reason string) (store.PowerRequest, error) {
	r, _, err := c.Submit(ctx, m, action, by, reason)
	if err != nil {
		return r, err
	}
	return c.Wait(ctx, r.ID)
}

// Wait blocks until request id is done or failed. Requests run by this
// process wake it at once; those run by other regions are polled.
func (c *Coordinator) Wait(ctx context.Context, id string) (store.PowerRequest, error) {
	for {
		ch := make(chan struct{})
		c.mu.Lock()
		c.waiters[id] = append(c.waiters[id], ch)
		c.mu.Unlock()
		r, err := c.q.GetPowerRequest(ctx, id)
		if err != nil || r.State == store.PowerDone || r.State == store.PowerFailed {
			c.dropWaiter(id, ch)
			return r, err
		}
		select {
		case <-ch:
		case <-time.After(c.cfg.Poll):
			c.dropWaiter(id, ch)
		case <-ctx.Done():
			c.dropWaiter(id, ch)
			return r, ctx.Err()
		}
	}
}

func (c *Coordinator) dropWaiter(id string, ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ws := c.waiters[id]
	for i, w := range ws {
		if w == ch {
			c.waiters[id] = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(c.waiters[id]) == 0 {
		delete(c.waiters, id)
	}
}

func (c *Coordinator) finished(id string) {
	c.mu.Lock()
	ws := c.waiters[id]
	delete(c.waiters, id)
	c.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

// Queue lists what is running and waiting for a machine.
func (c *Coordinator) Queue(ctx context.Context, systemID string) ([]store.PowerRequest, error) {
	return c.q.PowerQueue(ctx, systemID)
}

func (c *Coordinator) kick() {
	c.mu.Lock()
	if c.signal != nil {
		close(c.signal)
		c.signal = nil
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Run runs the workers and the lease janitor until ctx ends, then waits for
// commands in flight to finish (each is bounded by CommandTimeout).
func (c *Coordinator) Run(ctx context.Context) {
	var wg sync.WaitGroup
	workers := c.cfg.Workers
	if c.cfg.Racks {
		workers = 0 // the racks run them
	}
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.work(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); c.janitor(ctx) }()
	wg.Wait()
}

func (c *Coordinator) work(ctx context.Context) {
	for ctx.Err() == nil {
		now := c.now()
		r, err := c.q.ClaimPower(ctx, c.owner, now, now.Add(c.cfg.Lease))
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				c.log.Error("claim power request", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-c.wake:
			case <-time.After(c.cfg.Poll):
			}
			continue
		}
		c.kick() // another worker may find more
		c.run(r)
	}
}

// janitor takes back commands of regions that died and prunes history.
func (c *Coordinator) janitor(ctx context.Context) {
	t := time.NewTicker(c.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		abandoned, err := c.q.ExpirePowerLeases(ctx, c.now(), c.cfg.Attempts)
		if err != nil {
			c.log.Error("expire power leases", "err", err)
		}
		for _, r := range abandoned {
			cause := &Error{Kind: Timeout, Op: r.Action, Err: fmt.Errorf("abandoned after %d attempts: the region or rack running it stopped answering", r.Attempts)}
			r.State, r.Error, r.ErrorKind, r.Finished = store.PowerFailed, cause.Error(), string(Timeout), c.now()
			_ = c.finish(Result{Request: r, State: machine.PowerError, Err: cause})
		}
		if _, err := c.q.PrunePower(ctx, c.now().Add(-24*time.Hour)); err != nil {
			c.log.Error("prune power requests", "err", err)
		}
	}
}

// report forgets a finished query and wakes those waiting for the request.
func (c *Coordinator) report(res Result) {
	if res.Request.Action == string(QueryAction) {
		c.mu.Lock()
		if len(c.doneQueries) >= 4096 {
			clear(c.doneQueries)
		}
		c.doneQueries[res.Request.ID] = true
		c.mu.Unlock()
		c.forgetQuery(res.Request.SystemID, res.Request.ID)
	}
	c.finished(res.Request.ID)
}
