package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TouchRegion records that the region answering at url is alive now.
func (s *Store) TouchRegion(ctx context.Context, url string) error {
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO regions (url, seen) VALUES (?, ?) ON CONFLICT (url) DO UPDATE SET seen = excluded.seen`,
		url, s.tv(s.now()))
	if err != nil {
		return fmt.Errorf("touch region %s: %w", url, err)
	}
	return nil
}

// Regions lists the regions seen at or after since, most recently seen
// first.
func (s *Store) Regions(ctx context.Context, since time.Time) ([]string, error) {
	var out []string
	err := eachRow(ctx, s.conn(s.read), `SELECT url FROM regions WHERE seen >= ? ORDER BY seen DESC, url`, []any{s.tv(since)}, func(r *sql.Rows) error {
		var u string
		if err := r.Scan(&u); err != nil {
			return err
		}
		out = append(out, u)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("regions: %w", err)
	}
	return out, nil
}
