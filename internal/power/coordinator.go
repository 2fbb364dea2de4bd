package power

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// QueryAction is a power query; it travels through the same queue as the
// actions so that a query never overlaps a command on the same BMC.
const QueryAction machine.PowerAction = "query"

// Request is one power command asked of a machine.
type Request struct {
	ID          string
	SystemID    string
	Hostname    string
	Action      machine.PowerAction
	RequestedBy string
	Reason      string
	Queued      time.Time
	Started     time.Time // zero while waiting

	powerType string
	params    map[string]string
	done      chan struct{}
	result    *Result
}

// Result is how a request ended.
type Result struct {
	Request  Request
	State    machine.PowerState // what the BMC reported afterwards; unknown if it cannot tell
	Err      error
	Finished time.Time
}

// Reporter receives every result; the region records it on the machine.
type Reporter interface {
	PowerResult(ctx context.Context, r Result)
}

// Coordinator serialises power commands per machine. This implementation
// keeps its queues in memory and so serialises within one process.
type Coordinator struct {
	drivers  Registry
	reporter Reporter
	timeout  time.Duration
	now      func() time.Time

	mu     sync.Mutex
	queues map[string]*queue
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

type queue struct {
	running  bool // a drain goroutine owns this queue
	inFlight *Request
	waiting  []*Request
}

// NewCoordinator returns a coordinator that gives each command at most
// timeout to finish.
func NewCoordinator(drivers Registry, reporter Reporter, timeout time.Duration) *Coordinator {
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinator{
		drivers: drivers, reporter: reporter, timeout: timeout, now: time.Now,
		queues: map[string]*queue{}, ctx: ctx, cancel: cancel,
	}
}

// Drivers returns the registry, for validating parameters.
func (c *Coordinator) Drivers() Registry { return c.drivers }

// ErrStopped is returned by Submit after Stop.
var ErrStopped = errors.New("power coordinator stopped")

// Submit queues action for m and returns the request that will carry it
// out: an equal request already in flight or waiting is returned instead of
// a new one, so a burst of identical asks costs one BMC command.
func (c *Coordinator) Submit(m machine.Machine, action machine.PowerAction, by, reason string) (Request, error) {
	_, snap, err := c.submit(m, action, by, reason)
	return snap, err
}

// Do submits and waits for the result: the synchronous form that queries use.
func (c *Coordinator) Do(ctx context.Context, m machine.Machine, action machine.PowerAction, by, reason string) (Result, error) {
	r, _, err := c.submit(m, action, by, reason)
	if err != nil {
		return Result{}, err
	}
	select {
	case <-r.done:
		return *r.result, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// submit returns the request and a snapshot taken under the lock, since the
// drain goroutine writes Started.
func (c *Coordinator) submit(m machine.Machine, action machine.PowerAction, by, reason string) (*Request, Request, error) {
	if _, err := c.drivers.Lookup(m.PowerType); err != nil {
		return nil, Request{}, fmt.Errorf("power %s %s: %w", action, m.SystemID, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return nil, Request{}, ErrStopped
	}
	q := c.queues[m.SystemID]
	if q == nil {
		q = &queue{}
		c.queues[m.SystemID] = q
	}
	if r := q.find(action); r != nil {
		return r, r.snapshot(), nil
	}
	r := &Request{
		ID: newID(), SystemID: m.SystemID, Hostname: m.Hostname, Action: action,
		RequestedBy: by, Reason: reason, Queued: c.now(),
		powerType: m.PowerType, params: m.Clone().PowerParams, done: make(chan struct{}),
	}
	q.waiting = append(q.waiting, r)
	if !q.running {
		q.running = true
		c.wg.Add(1)
		go c.drain(m.SystemID)
	}
	return r, r.snapshot(), nil
}

// Queue shows what is in flight and waiting for a machine.
func (c *Coordinator) Queue(systemID string) (inFlight *Request, waiting []Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[systemID]
	if q == nil {
		return nil, nil
	}
	if q.inFlight != nil {
		s := q.inFlight.snapshot()
		inFlight = &s
	}
	for _, r := range q.waiting {
		waiting = append(waiting, r.snapshot())
	}
	return inFlight, waiting
}

// Stop refuses new requests, cancels those in flight and waits for the
// workers to finish reporting.
func (c *Coordinator) Stop() {
	c.cancel()
	c.wg.Wait()
}

// drain runs one machine's queue until it is empty.
func (c *Coordinator) drain(systemID string) {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		q := c.queues[systemID]
		if len(q.waiting) == 0 {
			q.inFlight = nil
			delete(c.queues, systemID)
			c.mu.Unlock()
			return
		}
		r := q.waiting[0]
		q.waiting = q.waiting[1:]
		r.Started = c.now()
		q.inFlight = r
		c.mu.Unlock()

		res := c.execute(r)
		c.mu.Lock()
		r.result = &res
		q.inFlight = nil
		c.mu.Unlock()
		close(r.done)
		if c.reporter != nil {
			c.reporter.PowerResult(context.WithoutCancel(c.ctx), res)
		}
	}
}

func (c *Coordinator) execute(r *Request) Result {
	res := Result{Request: r.snapshot(), State: machine.PowerUnknown}
	d, err := c.drivers.Lookup(r.powerType)
	if err != nil {
		res.Err, res.Finished = err, c.now()
		return res
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
	defer cancel()
	res.State, res.Err = Carry(ctx, d, r.params, r.Action, Backoff)
	if res.Err != nil && !errors.Is(res.Err, ErrUnsupported) {
		res.State = machine.PowerError
	}
	res.Finished = c.now()
	return res
}

func (q *queue) find(action machine.PowerAction) *Request {
	if q.inFlight != nil && q.inFlight.Action == action {
		return q.inFlight
	}
	for _, r := range q.waiting {
		if r.Action == action {
			return r
		}
	}
	return nil
}

func (q *queue) byID(id string) *Request {
	if q.inFlight != nil && q.inFlight.ID == id {
		return q.inFlight
	}
	for _, r := range q.waiting {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// snapshot copies the public fields, never the parameters (they hold secrets).
func (r *Request) snapshot() Request {
	return Request{
		ID: r.ID, SystemID: r.SystemID, Hostname: r.Hostname, Action: r.Action,
		RequestedBy: r.RequestedBy, Reason: r.Reason, Queued: r.Queued, Started: r.Started,
	}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
