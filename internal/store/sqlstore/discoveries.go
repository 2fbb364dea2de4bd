package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

// NoteDiscovery upserts a sighting: the first time sets first_seen, later
// ones count up and move last_seen.
func (s *Store) NoteDiscovery(ctx context.Context, d store.Discovery) error {
	at := s.tv(s.orNow(d.LastSeen))
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO discoveries (mac, ip, first_seen, last_seen, seen, last_what)
		VALUES (?, ?, ?, ?, 1, ?)
		ON CONFLICT (mac) DO UPDATE SET ip = CASE WHEN excluded.ip <> '' THEN excluded.ip ELSE discoveries.ip END,
		last_seen = excluded.last_seen, seen = discoveries.seen + 1, last_what = excluded.last_what`,
		d.MAC, d.IP, at, at, d.LastWhat)
	if err != nil {
		return fmt.Errorf("note discovery %s: %w", d.MAC, err)
	}
	return nil
}

// ListDiscoveries lists the sightings of MACs no machine has: a MAC
// leaves the list the moment a machine gets it, however it got it.
func (s *Store) ListDiscoveries(ctx context.Context) ([]store.Discovery, error) {
	out, err := s.sightings(ctx, `SELECT d.mac, d.ip, d.first_seen, d.last_seen, d.seen, d.last_what FROM discoveries d
		WHERE NOT EXISTS (SELECT 1 FROM interfaces i WHERE i.mac = d.mac) ORDER BY d.last_seen DESC`, nil)
	if err != nil {
		return nil, fmt.Errorf("list discoveries: %w", err)
	}
	return out, nil
}

// MachineSightings lists the sightings of MACs machines have (of those in
// macs, when macs is not nil): the address each was last seen with.
func (s *Store) MachineSightings(ctx context.Context, macs []string) ([]store.Discovery, error) {
	q := `SELECT d.mac, d.ip, d.first_seen, d.last_seen, d.seen, d.last_what FROM discoveries d JOIN interfaces i ON i.mac = d.mac`
	var args []any
	if macs != nil {
		if len(macs) == 0 {
			return nil, nil
		}
		q += ` WHERE d.mac IN ` + placeholders(len(macs))
		args = anys(macs)
	}
	out, err := s.sightings(ctx, q+` ORDER BY d.mac`, args)
	if err != nil {
		return nil, fmt.Errorf("list machine sightings: %w", err)
	}
	return out, nil
}

func (s *Store) sightings(ctx context.Context, query string, args []any) ([]store.Discovery, error) {
	var out []store.Discovery
	err := eachRow(ctx, s.conn(s.read), query, args, func(r *sql.Rows) error {
		var d store.Discovery
		err := r.Scan(&d.MAC, &d.IP, timeDest{&d.FirstSeen}, timeDest{&d.LastSeen}, &d.Seen, &d.LastWhat)
		out = append(out, d)
		return err
	})
	return out, err
}

func (s *Store) DeleteDiscovery(ctx context.Context, mac string) error {
	_, err := s.conn(s.write).exec(ctx, `DELETE FROM discoveries WHERE mac = ?`, mac)
	return err
}

// Prune deletes events and discoveries older than r says, and the
// discoveries beyond its count, at most r.Batch events a call so that one
// pass never holds the database for long. Several regions may prune at
// once: each delete is idempotent.
func (s *Store) Prune(ctx context.Context, r store.Retention) (store.Pruned, error) {
	var p store.Pruned
	now := s.now()
	w := s.conn(s.write)
	if r.EventAge > 0 {
		res, err := w.exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created < ? ORDER BY id LIMIT ?)`,
			s.tv(now.Add(-r.EventAge)), r.Batch)
		if err != nil {
			return p, fmt.Errorf("prune events: %w", err)
		}
		p.Events, _ = res.RowsAffected()
	}
	if r.DiscoveryAge > 0 {
		res, err := w.exec(ctx, `DELETE FROM discoveries WHERE last_seen < ?`, s.tv(now.Add(-r.DiscoveryAge)))
		if err != nil {
			return p, fmt.Errorf("prune discoveries: %w", err)
		}
		p.Discoveries, _ = res.RowsAffected()
	}
	if r.MaxDiscoveries > 0 {
		// Keep the newest: drop what was last seen before the
		// MaxDiscoveries-th newest sighting.
		res, err := w.exec(ctx, `DELETE FROM discoveries WHERE last_seen < (SELECT last_seen FROM discoveries ORDER BY last_seen DESC LIMIT 1 OFFSET ?)`,
			r.MaxDiscoveries-1)
		if err != nil {
			return p, fmt.Errorf("cap discoveries: %w", err)
		}
		n, _ := res.RowsAffected()
		p.Discoveries += n
	}
	return p, s.pruneSightings(ctx)
}
