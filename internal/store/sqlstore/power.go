package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

const powerColumns = `id, system_id, bmc_key, action, state, requested_by, reason, created, started,
	finished, attempts, lease_owner, lease_expires, result_state, error, error_kind, sent`

func scanPower(sc interface{ Scan(...any) error }) (store.PowerRequest, error) {
	var r store.PowerRequest
	err := sc.Scan(&r.ID, &r.SystemID, &r.BMCKey, &r.Action, &r.State, &r.RequestedBy, &r.Reason,
		timeDest{&r.Created}, timeDest{&r.Started}, timeDest{&r.Finished}, &r.Attempts, &r.LeaseOwner,
		timeDest{&r.LeaseExpires}, &r.ResultState, &r.Error, &r.ErrorKind, timeDest{&r.Sent})
	return r, err
}

// EnqueuePower coalesces with the machine's newest queued or running
// request when that one is equal. Only the newest: coalescing with an
// older one would reorder intent (on, off, on must not become on, off).
// The check and the insert are one write transaction, and claims and
// enqueues take the same lock on PostgreSQL, so two regions cannot both
// insert one.
func (s *Store) EnqueuePower(ctx context.Context, r store.PowerRequest) (store.PowerRequest, bool, error) {
	var (
		out       store.PowerRequest
		coalesced bool
	)
	err := s.inTx(ctx, func(q conn) error {
		var err error
		out, coalesced, err = s.enqueue(ctx, q, r)
		return err
	})
	if err != nil {
		return store.PowerRequest{}, false, fmt.Errorf("enqueue power %s for %s: %w", r.Action, r.SystemID, err)
	}
	return out, coalesced, nil
}

// enqueue is EnqueuePower inside the caller's transaction q.
func (s *Store) enqueue(ctx context.Context, q conn, r store.PowerRequest) (store.PowerRequest, bool, error) {
	if err := s.lockPower(ctx, q); err != nil {
		return store.PowerRequest{}, false, err
	}
	last, err := scanPower(q.queryRow(ctx, `SELECT `+powerColumns+` FROM power_requests
		WHERE system_id = ? AND state IN ('queued', 'running') ORDER BY seq DESC LIMIT 1`, r.SystemID))
	if err == nil && last.Action == r.Action {
		return last, true, nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return store.PowerRequest{}, false, err
	}
	if r.ID == "" {
		r.ID = newRequestID()
	}
	r.State, r.Created = store.PowerQueued, s.orNow(r.Created)
	_, err = q.exec(ctx, `INSERT INTO power_requests (id, system_id, bmc_key, action, state, requested_by, reason, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.SystemID, r.BMCKey, r.Action, r.State, r.RequestedBy, r.Reason, s.tv(r.Created))
	r.Created = s.norm(r.Created)
	return r, false, err
}

// lockPower serialises queue changes across processes where the database
// needs it (PostgreSQL); SQLite's write transactions are already exclusive.
func (s *Store) lockPower(ctx context.Context, q conn) error {
	if s.d.LockPower == "" {
		return nil
	}
	_, err := q.exec(ctx, s.d.LockPower)
	return err
}

// ClaimPower picks the oldest runnable action, else the oldest runnable
// query. The NOT EXISTS clauses are the queue's two rules: one command per
// machine and one per BMC; and a machine's requests run in arrival order,
// except that an action may overtake its machine's queued queries (a poll
// read after the action instead of before it loses nothing). Actions go
// first so that, when the monitor's polls fill the queue (a sweep that
// takes longer than the interval), an operator's command or a drift
// correction does not wait behind all of them. "ORDER BY +r.seq" keeps
// SQLite from walking the whole queue in seq order to avoid a sort; it
// reads the few queued actions through power_requests_state_action.
func (s *Store) ClaimPower(ctx context.Context, owner string, now, leaseUntil time.Time) (store.PowerRequest, error) {
	return s.ClaimPowerWhere(ctx, owner, now, leaseUntil, nil)
}

// ClaimPowerWhere is ClaimPower among the runnable requests ok accepts (a
// rack's: those whose BMC it reaches); nil accepts all. With ok set the
// runnable requests are read in order until one passes, since which BMC a
// rack reaches (CIDR containment) is not something both databases' SQL can
// decide.
func (s *Store) ClaimPowerWhere(ctx context.Context, owner string, now, leaseUntil time.Time, ok func(store.PowerRequest) bool) (store.PowerRequest, error) {
	var r store.PowerRequest
	err := s.inTx(ctx, func(q conn) error {
		if err := s.lockPower(ctx, q); err != nil {
			return err
		}
		var err error
		r, err = s.firstRunnable(ctx, q, claimAction, ok)
		if errors.Is(err, sql.ErrNoRows) {
			r, err = s.firstRunnable(ctx, q, claimAny, ok)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		r.State, r.Attempts, r.LeaseOwner = store.PowerRunning, r.Attempts+1, owner
		r.Started, r.LeaseExpires = s.norm(now), s.norm(leaseUntil)
		_, err = q.exec(ctx, `UPDATE power_requests SET state = ?, attempts = ?, lease_owner = ?, started = ?, lease_expires = ?
			WHERE id = ?`, r.State, r.Attempts, owner, s.tv(now), s.tv(leaseUntil), r.ID)
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return r, err
		}
		return r, fmt.Errorf("claim power request: %w", err)
	}
	return r, nil
}

// firstRunnable is the first request query returns that ok accepts;
// sql.ErrNoRows when none does.
func (s *Store) firstRunnable(ctx context.Context, q conn, query string, ok func(store.PowerRequest) bool) (store.PowerRequest, error) {
	if ok == nil {
		return scanPower(q.queryRow(ctx, query+` LIMIT 1`))
	}
	var found *store.PowerRequest
	errFound := errors.New("found")
	err := eachRow(ctx, q, query, nil, func(rows *sql.Rows) error {
		r, err := scanPower(rows)
		if err != nil {
			return err
		}
		if ok(r) {
			found = &r
			return errFound
		}
		return nil
	})
	switch {
	case found != nil:
		return *found, nil
	case err != nil:
		return store.PowerRequest{}, err
	}
	return store.PowerRequest{}, sql.ErrNoRows
}

var (
	claimAction = `SELECT ` + powerColumns + ` FROM power_requests r
			WHERE r.state = 'queued' AND (r.action < 'query' OR r.action > 'query')
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'running' AND x.system_id = r.system_id)
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'running' AND x.bmc_key = r.bmc_key AND r.bmc_key <> '')
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'queued' AND x.system_id = r.system_id AND x.seq < r.seq
				AND x.action <> 'query')
			ORDER BY +r.seq`
	claimAny = `SELECT ` + powerColumns + ` FROM power_requests r
			WHERE r.state = 'queued'
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'running' AND x.system_id = r.system_id)
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'running' AND x.bmc_key = r.bmc_key AND r.bmc_key <> '')
			AND NOT EXISTS (SELECT 1 FROM power_requests x WHERE x.state = 'queued' AND x.system_id = r.system_id AND x.seq < r.seq)
			ORDER BY r.seq`
)

func (s *Store) ExtendPowerLease(ctx context.Context, id, owner string, until time.Time) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE power_requests SET lease_expires = ?
		WHERE id = ? AND lease_owner = ? AND state = 'running'`, s.tv(until), id, owner)
	if err != nil {
		return fmt.Errorf("extend power lease %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("running power request held by "+owner, id)
	}
	return nil
}

func (s *Store) FinishPower(ctx context.Context, r store.PowerRequest) error {
	if err := s.finishIn(ctx, s.conn(s.write), r); err != nil {
		return fmt.Errorf("finish power request %s: %w", r.ID, err)
	}
	return nil
}

// FinishPowerWith is FinishPower and fn's change to the request's machine
// (with the request fn returns, enqueued as EnqueuePower does) in one
// transaction. Locks are taken in the order every power transaction uses
// (the machine's row, then the queue, then requests), so that it cannot
// deadlock with a claim, an enqueue or a lease expiry. A machine deleted
// meanwhile leaves only the request to finish: the zero machine is
// returned, as it is when fn is nil.
func (s *Store) FinishPowerWith(ctx context.Context, r store.PowerRequest, fn store.PowerUpdateFunc) (machine.Machine, *store.PowerRequest, error) {
	var (
		u    machineUpdate
		next *store.PowerRequest
		gone bool
	)
	err := s.inTx(ctx, func(q conn) error {
		if fn == nil {
			gone = true
		} else {
			err := s.updateIn(ctx, q, r.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
				evs, n, err := fn(m)
				next = n
				return evs, err
			}, &u)
			if errors.Is(err, store.ErrNotFound) && u.fnErr == nil {
				gone, next = true, nil
			} else if err != nil {
				return err
			}
		}
		if err := s.lockPower(ctx, q); err != nil {
			return err
		}
		if err := s.finishIn(ctx, q, r); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		next.SystemID = r.SystemID
		n, _, err := s.enqueue(ctx, q, *next)
		if err != nil {
			return fmt.Errorf("enqueue power %s: %w", next.Action, err)
		}
		next = &n
		return nil
	})
	if err != nil {
		if u.fnErr != nil {
			return machine.Machine{}, nil, u.fnErr
		}
		return machine.Machine{}, nil, fmt.Errorf("finish power request %s: %w", r.ID, err)
	}
	if gone {
		return machine.Machine{}, nil, nil
	}
	return u.m, next, nil
}

// finishIn marks r, running under r.LeaseOwner, as ended.
func (s *Store) finishIn(ctx context.Context, q conn, r store.PowerRequest) error {
	if r.State != store.PowerDone && r.State != store.PowerFailed {
		return fmt.Errorf("state %q is not done or failed", r.State)
	}
	res, err := q.exec(ctx, `UPDATE power_requests SET state = ?, finished = ?, result_state = ?, error = ?, error_kind = ?
		WHERE id = ? AND lease_owner = ? AND state = 'running'`,
		r.State, s.tv(s.orNow(r.Finished)), r.ResultState, r.Error, r.ErrorKind, r.ID, r.LeaseOwner)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("running power request held by "+r.LeaseOwner, r.ID)
	}
	return nil
}

// MarkPowerSent records that the worker holding r is about to send its
// command to the BMC.
func (s *Store) MarkPowerSent(ctx context.Context, id, owner string, at time.Time) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE power_requests SET sent = ?
		WHERE id = ? AND lease_owner = ? AND state = 'running'`, s.tv(at), id, owner)
	if err != nil {
		return fmt.Errorf("mark power request %s sent: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("running power request held by "+owner, id)
	}
	return nil
}

func (s *Store) ExpirePowerLeases(ctx context.Context, now time.Time, maxAttempts int) ([]store.PowerRequest, error) {
	var abandoned []store.PowerRequest
	err := s.inTx(ctx, func(q conn) error {
		if err := s.lockPower(ctx, q); err != nil {
			return err
		}
		var expired []store.PowerRequest
		err := eachRow(ctx, q, `SELECT `+powerColumns+` FROM power_requests WHERE state = 'running' AND lease_expires < ?`,
			[]any{s.tv(now)}, func(rows *sql.Rows) error {
				r, err := scanPower(rows)
				expired = append(expired, r)
				return err
			})
		if err != nil {
			return err
		}
		for _, r := range expired {
			if r.Attempts >= maxAttempts {
				abandoned = append(abandoned, r)
				continue
			}
			if _, err := q.exec(ctx, `UPDATE power_requests SET state = 'queued', lease_owner = '', lease_expires = NULL WHERE id = ?`, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire power leases: %w", err)
	}
	return abandoned, nil
}

func (s *Store) GetPowerRequest(ctx context.Context, id string) (store.PowerRequest, error) {
	r, err := scanPower(s.conn(s.read).queryRow(ctx, `SELECT `+powerColumns+` FROM power_requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("power request", id)
	}
	if err != nil {
		return r, fmt.Errorf("get power request %s: %w", id, err)
	}
	return r, nil
}

func (s *Store) PowerQueue(ctx context.Context, systemID string) ([]store.PowerRequest, error) {
	var out []store.PowerRequest
	err := eachRow(ctx, s.conn(s.read), `SELECT `+powerColumns+` FROM power_requests
		WHERE system_id = ? AND state IN ('running', 'queued') ORDER BY seq`, []any{systemID}, func(rows *sql.Rows) error {
		r, err := scanPower(rows)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("power queue of %s: %w", systemID, err)
	}
	return out, nil
}

func (s *Store) PrunePower(ctx context.Context, before time.Time) (int, error) {
	res, err := s.conn(s.write).exec(ctx, `DELETE FROM power_requests WHERE state IN ('done', 'failed') AND finished < ?`, s.tv(before))
	if err != nil {
		return 0, fmt.Errorf("prune power requests: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
