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
	res.Request = Ended(r, state, err, c.now())
	_ = c.finish(res)
}

// Ended is r as it ends with the BMC's state and err: done, or failed
// with the error and its kind. An unsupported operation (a query of a
// BMC that cannot tell) ends done.
func Ended(r store.PowerRequest, state machine.PowerState, err error, at time.Time) store.PowerRequest {
	r.State, r.ResultState, r.Finished = store.PowerDone, string(state), at
	if err != nil && !errors.Is(err, ErrUnsupported) {
		r.State, r.Error, r.ErrorKind = store.PowerFailed, err.Error(), string(Classify(err))
	}
	return r
}

// finish ends a request and stores the step its result implies for the
// machine in one transaction (Reporter.PowerResult), then tells whoever
// waits. If that transaction cannot be stored the request is ended alone:
// the step is then left to the phase's timeout, which is better than
// running the command again.
//
// It returns store.ErrNotFound when the request is no longer running under
// its lease (taken back meanwhile), so that a rack reporting late is told.
func (c *Coordinator) finish(res Result) error {
	ctx := context.Background()
	var rec Record
	if c.reporter != nil {
		rec = c.reporter.PowerResult(ctx, res)
	}
	m, next, err := c.q.FinishPowerWith(ctx, res.Request, rec.Change)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return err // taken back meanwhile: not ours to report
		}
		c.log.Error("record power result", "id", res.Request.ID, "system_id", res.Request.SystemID, "err", err)
		if ferr := c.q.FinishPower(ctx, res.Request); ferr != nil {
			c.log.Error("finish power request", "id", res.Request.ID, "err", ferr)
			return ferr
		}
		m, next, rec.Done = machine.Machine{}, nil, nil
	}
	c.report(res)
	if rec.Done != nil {
		rec.Done(m, next)
	}
	return nil
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

// attempt runs the command with the machine's power parameters as stored.
func (c *Coordinator) attempt(ctx context.Context, r store.PowerRequest) (machine.PowerState, Step, error) {
	m, err := c.q.GetMachine(ctx, r.SystemID)
	if err != nil {
		return machine.PowerUnknown, "", &Error{Kind: BadParams, Op: r.Action, Err: fmt.Errorf("machine: %w", err)}
	}
	d, err := c.drivers.Lookup(m.PowerType)
	if err != nil {
		return machine.PowerUnknown, "", &Error{Kind: BadParams, Op: r.Action, Err: err}
	}
	return Attempt(ctx, d, m.PowerParams, r, c.cfg, func(ctx context.Context) error {
		return c.q.MarkPowerSent(ctx, r.ID, c.owner, c.now())
	})
}

// Attempt runs a claimed request's command with d, retrying failures that
// may pass (unreachable, timeouts, BMC errors) and not refusals. Before an
// action's command can reach the BMC, markSent records that it may have
// (PowerRequest.Sent), so that a re-run after its worker dies checks the
// BMC first (CarryResumed) rather than cycling a machine twice; such a
// re-run returns the Step it took. A region's workers and a rack's run
// commands through this one function.
func Attempt(ctx context.Context, d Driver, params map[string]string, r store.PowerRequest, cfg Config, markSent func(context.Context) error) (machine.PowerState, Step, error) {
	cfg.defaults()
	action := machine.PowerAction(r.Action)
	timeout, attempts := cfg.CommandTimeout, cfg.Attempts
	if action == QueryAction {
		timeout, attempts = cfg.QueryTimeout, 1
	} else if r.Sent.IsZero() {
		if err := markSent(ctx); err != nil {
			return machine.PowerUnknown, "", fmt.Errorf("mark power %s sent: %w", r.Action, err)
		}
	}
	resumed := action != QueryAction && !r.Sent.IsZero()
	var (
		state machine.PowerState
		step  Step
		err   error
	)
	for i := 1; ; i++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		if resumed {
			state, step, err = CarryResumed(actx, d, params, action, cfg.Backoff)
		} else {
			state, err = Carry(actx, d, params, action, cfg.Backoff)
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
