package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// SetRackLeases writes only what changed: a rack reports its whole set
// every time, and most of it is what it reported a second ago.
func (s *Store) SetRackLeases(ctx context.Context, rackID string, ls []store.RackLease, now time.Time) error {
	err := s.inTx(ctx, func(q conn) error {
		had := map[string]store.RackLease{}
		err := eachRow(ctx, q, `SELECT mac, ip, subnet, expires FROM rack_dhcp_leases WHERE rack_id = ?`, []any{rackID}, func(r *sql.Rows) error {
			var l store.RackLease
			if err := r.Scan(&l.MAC, &l.IP, &l.Subnet, timeDest{&l.Expires}); err != nil {
				return err
			}
			had[l.MAC] = l
			return nil
		})
		if err != nil {
			return err
		}
		for _, l := range ls {
			l.RackID, l.MAC, l.Expires = rackID, strings.ToLower(l.MAC), s.norm(l.Expires)
			old, ok := had[l.MAC]
			delete(had, l.MAC)
			if ok && old.IP == l.IP && old.Subnet == l.Subnet && old.Expires.Equal(l.Expires) {
				continue
			}
			if _, err := q.exec(ctx, `INSERT INTO rack_dhcp_leases (rack_id, mac, ip, subnet, expires) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (rack_id, mac) DO UPDATE SET ip = excluded.ip, subnet = excluded.subnet, expires = excluded.expires`,
				rackID, l.MAC, l.IP, l.Subnet, s.tv(l.Expires)); err != nil {
				return err
			}
		}
		for mac := range had {
			if _, err := q.exec(ctx, `DELETE FROM rack_dhcp_leases WHERE rack_id = ? AND mac = ?`, rackID, mac); err != nil {
				return err
			}
		}
		_, err = q.exec(ctx, `DELETE FROM rack_dhcp_leases WHERE expires < ?`, s.tv(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("rack %s leases: %w", rackID, err)
	}
	return nil
}

func (s *Store) RackLeases(ctx context.Context, at time.Time) ([]store.RackLease, error) {
	out, err := listOf(ctx, s.conn(s.read), `SELECT rack_id, mac, ip, subnet, expires FROM rack_dhcp_leases WHERE expires > ?
		ORDER BY subnet, ip, rack_id`, []any{s.tv(at)}, func(sc scanner) (store.RackLease, error) {
		var l store.RackLease
		err := sc.Scan(&l.RackID, &l.MAC, &l.IP, &l.Subnet, timeDest{&l.Expires})
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("rack leases: %w", err)
	}
	return out, nil
}
