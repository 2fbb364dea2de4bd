package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

const eventCols = `e.id, e.system_id, e.hostname, e.type, e.level, e.description, e.username, e.created`

// insertEvents appends events in q's transaction; a zero Created becomes now.
func (s *Store) insertEvents(ctx context.Context, q conn, events []machine.Event) error {
	if len(events) == 0 {
		return nil
	}
	if s.d.LockEvents != "" {
		if _, err := q.exec(ctx, s.d.LockEvents); err != nil {
			return fmt.Errorf("lock events: %w", err)
		}
	}
	for _, e := range events {
		_, err := q.exec(ctx, `INSERT INTO events (system_id, hostname, type, level, level_rank, description, username, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, e.SystemID, e.Hostname, e.Type, string(e.Level), e.Level.Rank(),
			e.Description, e.User, s.tv(s.orNow(e.Created)))
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
	}
	return nil
}

// AppendEvents stores events in one transaction, assigning increasing IDs
// in the order given.
func (s *Store) AppendEvents(ctx context.Context, events ...machine.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := s.inTx(ctx, func(q conn) error { return s.insertEvents(ctx, q, events) }); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// QueryEvents returns the events f selects, newest first unless
// f.Ascending; f.Limit defaults to 100 and is capped at 1000. MinLevel
// compares machine.Level.Rank, so INFO also returns AUDIT, WARNING and up.
func (s *Store) QueryEvents(ctx context.Context, f store.EventFilter) ([]machine.Event, error) {
	query, args := eventQuery(f)
	var out []machine.Event
	err := eachRow(ctx, s.conn(s.read), query, args, func(r *sql.Rows) error {
		var e machine.Event
		err := r.Scan(&e.ID, &e.SystemID, &e.Hostname, &e.Type, &e.Level, &e.Description, &e.User, timeDest{&e.Created})
		out = append(out, e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query events: %w", err)
	}
	return out, nil
}

// LastEventID returns the highest event ID, 0 when there are none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.conn(s.read).queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event ID: %w", err)
	}
	return id, nil
}
