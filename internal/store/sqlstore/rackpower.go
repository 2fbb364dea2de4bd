package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// ReleasePower puts a running request that owner claimed but never marked
// sent back in the queue with its attempt uncounted: the rack found the
// BMC unreachable from where it is, and another rack may reach it.
func (s *Store) ReleasePower(ctx context.Context, id, owner string) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE power_requests SET state = 'queued', lease_owner = '', lease_expires = NULL,
		attempts = attempts - 1 WHERE id = ? AND lease_owner = ? AND state = 'running' AND sent IS NULL`, id, owner)
	if err != nil {
		return fmt.Errorf("release power request %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("unsent running power request held by "+owner, id)
	}
	return nil
}

// NoteRackPower records that a rack asked for power work now, with the
// networks it declared (stored comma-separated), and forgets racks not
// seen for a day.
func (s *Store) NoteRackPower(ctx context.Context, r store.RackPower) error {
	seen := s.orNow(r.Seen)
	if _, err := s.conn(s.write).exec(ctx, `DELETE FROM rack_power WHERE seen < ?`, s.tv(seen.Add(-24*time.Hour))); err != nil {
		return fmt.Errorf("forget power racks: %w", err)
	}
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO rack_power (rack_id, hostname, networks, seen) VALUES (?, ?, ?, ?)
		ON CONFLICT (rack_id) DO UPDATE SET hostname = excluded.hostname, networks = excluded.networks, seen = excluded.seen`,
		r.ID, r.Hostname, strings.Join(r.Networks, ","), s.tv(seen))
	if err != nil {
		return fmt.Errorf("note power rack %s: %w", r.ID, err)
	}
	if r.SystemID != "" {
		if _, err := s.conn(s.write).exec(ctx, `UPDATE racks SET seen = ? WHERE system_id = ? AND enrolled = ? AND seen < ?`,
			s.tv(seen), r.SystemID, true, s.tv(seen)); err != nil {
			return fmt.Errorf("note power rack %s: %w", r.ID, err)
		}
	}
	return nil
}

// RackPowers lists the racks seen asking for power work since since. It
// only reads: the region asks while it queues a request, which may be
// inside a write transaction.
func (s *Store) RackPowers(ctx context.Context, since time.Time) ([]store.RackPower, error) {
	var out []store.RackPower
	err := eachRow(ctx, s.conn(s.read), `SELECT rack_id, hostname, networks, seen FROM rack_power WHERE seen >= ? ORDER BY rack_id`,
		[]any{s.tv(since)}, func(rows *sql.Rows) error {
			var r store.RackPower
			var nets string
			if err := rows.Scan(&r.ID, &r.Hostname, &nets, timeDest{&r.Seen}); err != nil {
				return err
			}
			if nets != "" {
				r.Networks = strings.Split(nets, ",")
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("power racks: %w", err)
	}
	return out, nil
}
