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
	state, step, err := c.attempt(ctx, r)
	res := Result{Request: r, State: state, Err: err, Duration: c.now().Sub(start), Resumed: step}
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
	res.Request = r
	c.finish(res)
}

// finish ends a request and stores the step its result implies for the
// machine in one transaction (Reporter.PowerResult), then tells whoever
// waits. If that transaction cannot be stored the request is ended alone:
// the step is then left to the phase's timeout, which is better than
// running the command again.
func (c *Coordinator) finish(res Result) {
	ctx := context.Background()
	var rec Record
	if c.reporter != nil {
		rec = c.reporter.PowerResult(ctx, res)
	}
	m, next, err := c.q.FinishPowerWith(ctx, res.Request, rec.Change)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return // taken back meanwhile: not ours to report
		}
		c.log.Error("record power result", "id", res.Request.ID, "system_id", res.Request.SystemID, "err", err)
		if ferr := c.q.FinishPower(ctx, res.Request); ferr != nil {
			c.log.Error("finish power request", "id", res.Request.ID, "err", ferr)
			return
		}
		m, next, rec.Done = machine.Machine{}, nil, nil
	}
	c.report(res)
	if rec.Done != nil {
		rec.Done(m, next)
	}
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
// timeouts, BMC errors) and not refusals. Before an action's command can
// reach the BMC the request is marked sent, so that a re-run after this
// process dies checks the BMC first (CarryResumed) rather than cycling a
// machine twice; such a re-run returns the Step it took.
func (c *Coordinator) attempt(ctx context.Context, r store.PowerRequest) (machine.PowerState, Step, error) {
	m, err := c.q.GetMachine(ctx, r.SystemID)
	if err != nil {
		return machine.PowerUnknown, "", &Error{Kind: BadParams, Op: r.Action, Err: fmt.Errorf("machine: %w", err)}
	}
	d, err := c.drivers.Lookup(m.PowerType)
	if err != nil {
		return machine.PowerUnknown, "", &Error{Kind: BadParams, Op: r.Action, Err: err}
	}
	action := machine.PowerAction(r.Action)
	timeout, attempts := c.cfg.CommandTimeout, c.cfg.Attempts
	if action == QueryAction {
		timeout, attempts = c.cfg.QueryTimeout, 1
	} else if r.Sent.IsZero() {
		if err := c.q.MarkPowerSent(ctx, r.ID, c.owner, c.now()); err != nil {
			return machine.PowerUnknown, "", fmt.Errorf("mark power %s sent: %w", r.Action, err)
		}
	}
	resumed := action != QueryAction && !r.Sent.IsZero()
	var (
		state machine.PowerState
		step  Step
	)
	for i := 1; ; i++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		if resumed {
			state, step, err = CarryResumed(actx, d, m.PowerParams, action, c.cfg.Backoff)
		} else {
			state, err = Carry(actx, d, m.PowerParams, action, c.cfg.Backoff)
		}
		cancel()
		if err == nil || i >= attempts || !transient(err) || ctx.Err() != nil {
			return state, step, err
		}
		select {
		case <-ctx.Done():
			return state, step, err
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
