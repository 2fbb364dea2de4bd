package power

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// run carries out one claimed request and records how it ended. It holds
// the lease while it works; if the lease is lost (this process stalled past
// it and another region took the command back) it stops and reports
// nothing, since the command is someone else's now.
func (c *Coordinator) run(r store.PowerRequest) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lost := make(chan struct{})
	go c.holdLease(ctx, r.ID, cancel, lost)

	start := c.now()
	state, err := c.attempt(ctx, r)
	res := Result{Request: r, State: state, Err: err, Duration: c.now().Sub(start)}
	select {
	case <-lost:
		c.log.Warn("power request lease lost; another region retries it", "id", r.ID, "system_id", r.SystemID)
		return
	default:
	}
	cancel()
	r.State, r.ResultState, r.Finished = store.PowerDone, string(state), c.now()
	if err != nil && !errors.Is(err, ErrUnsupported) {
		r.State, r.Error, r.ErrorKind = store.PowerFailed, err.Error(), string(Classify(err))
	}
	if ferr := c.q.FinishPower(context.Background(), r); ferr != nil {
		c.log.Error("finish power request", "id", r.ID, "err", ferr)
		if errors.Is(ferr, store.ErrNotFound) {
			return // taken back meanwhile: not ours to report
		}
	}
	res.Request = r
	c.report(res)
}

// holdLease renews the lease until ctx ends; if renewal fails because the
// lease is gone, it cancels the work.
func (c *Coordinator) holdLease(ctx context.Context, id string, cancel context.CancelFunc, lost chan struct{}) {
	t := time.NewTicker(c.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.q.ExtendPowerLease(context.Background(), id, c.owner, c.now().Add(c.cfg.Lease))
		if errors.Is(err, store.ErrNotFound) {
			close(lost)
			cancel()
			return
		}
	}
}

// attempt runs the command, retrying failures that may pass (unreachable,
// timeouts, BMC errors) and not refusals.
func (c *Coordinator) attempt(ctx context.Context, r store.PowerRequest) (machine.PowerState, error) {
	m, err := c.q.GetMachine(ctx, r.SystemID)
	if err != nil {
		return machine.PowerUnknown, &Error{Kind: BadParams, Op: r.Action, Err: fmt.Errorf("machine: %w", err)}
	}
	d, err := c.drivers.Lookup(m.PowerType)
	if err != nil {
		return machine.PowerUnknown, &Error{Kind: BadParams, Op: r.Action, Err: err}
	}
	timeout, attempts := c.cfg.CommandTimeout, c.cfg.Attempts
	if machine.PowerAction(r.Action) == QueryAction {
		timeout, attempts = c.cfg.QueryTimeout, 1
	}
	var state machine.PowerState
	for i := 1; ; i++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		state, err = Carry(actx, d, m.PowerParams, machine.PowerAction(r.Action), c.cfg.Backoff)
		cancel()
		if err == nil || i >= attempts || !transient(err) || ctx.Err() != nil {
			return state, err
		}
		select {
		case <-ctx.Done():
			return state, err
		case <-time.After(time.Duration(i) * time.Second):
		}
	}
}

func transient(err error) bool {
	switch Classify(err) {
	case Unreachable, Timeout, BMCError:
		return true
	}
	return false
}
