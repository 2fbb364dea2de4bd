package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AcquireLease reads and writes the lease row in one write transaction;
// on PostgreSQL the row is locked (or, when absent, the insert's primary
// key decides between two regions racing for it).
func (s *Store) AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error) {
	got := false
	err := s.inTx(ctx, func(q conn) error {
		var cur string
		var exp time.Time
		err := q.queryRow(ctx, `SELECT holder, expires FROM leases WHERE name = ?`+s.d.ForUpdateRow, name).Scan(&cur, timeDest{&exp})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = q.exec(ctx, `INSERT INTO leases (name, holder, expires) VALUES (?, ?, ?)`, name, holder, s.tv(until))
			if err != nil && s.d.IsUniqueViolation(err) {
				return nil // another region won the race
			}
			got = err == nil
			return err
		case err != nil:
			return err
		case cur != holder && exp.After(now):
			return nil
		}
		_, err = q.exec(ctx, `UPDATE leases SET holder = ?, expires = ? WHERE name = ?`, holder, s.tv(until), name)
		got = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", name, err)
	}
	return got, nil
}
