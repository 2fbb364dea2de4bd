package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

// Zones and pools are the same thing under two names: a named group of
// machines with a description, a "default" that always exists, and a
// machines column that refers to it. One implementation serves both.
type group struct {
	kind  string // "zone", for messages
	table string // "zones"
	fk    string // the machines column: "zone_id"
}

var (
	zones = group{kind: "zone", table: "zones", fk: "zone_id"}
	pools = group{kind: "pool", table: "pools", fk: "pool_id"}
)

// groupRow converts to store.Zone and store.Pool, which have its fields.
type groupRow struct {
	ID          int64
	Name        string
	Description string
}

func (s *Store) listGroups(ctx context.Context, g group) ([]groupRow, error) {
	var out []groupRow
	err := eachRow(ctx, s.conn(s.read), `SELECT id, name, description FROM `+g.table+` ORDER BY name`, nil,
		func(r *sql.Rows) error {
			var row groupRow
			err := r.Scan(&row.ID, &row.Name, &row.Description)
			out = append(out, row)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", g.kind, err)
	}
	return out, nil
}

func (s *Store) getGroup(ctx context.Context, q conn, g group, name string) (groupRow, error) {
	var row groupRow
	err := q.queryRow(ctx, `SELECT id, name, description FROM `+g.table+` WHERE name = ?`, name).
		Scan(&row.ID, &row.Name, &row.Description)
	if errors.Is(err, sql.ErrNoRows) {
		return row, notFound(g.kind, name)
	}
	if err != nil {
		return row, fmt.Errorf("get %s %q: %w", g.kind, name, err)
	}
	return row, nil
}

// groupIDs resolves a machine's zone and pool names to row IDs.
func (s *Store) groupIDs(ctx context.Context, q conn, zone, pool string) (zoneID, poolID int64, err error) {
	z, err := s.getGroup(ctx, q, zones, zone)
	if err != nil {
		return 0, 0, err
	}
	p, err := s.getGroup(ctx, q, pools, pool)
	return z.ID, p.ID, err
}

func (s *Store) createGroup(ctx context.Context, g group, row groupRow) (groupRow, error) {
	if row.Name == "" {
		return row, fmt.Errorf("create %s: a name is required", g.kind)
	}
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO `+g.table+` (name, description) VALUES (?, ?) RETURNING id`,
		row.Name, row.Description).Scan(&row.ID)
	if err != nil {
		return row, fmt.Errorf("create %s %q: %w", g.kind, row.Name, s.uniqueName(err, g.kind, row.Name))
	}
	return row, nil
}

// updateGroup renames (when row.Name is set and differs) and sets the
// description. "default" keeps its name, since machines that name no group
// land in it.
func (s *Store) updateGroup(ctx context.Context, g group, name string, row groupRow) (groupRow, error) {
	if row.Name == "" {
		row.Name = name
	}
	err := s.inTx(ctx, func(q conn) error {
		cur, err := s.getGroup(ctx, q, g, name)
		if err != nil {
			return err
		}
		if name == defaultGroup && row.Name != name {
			return fmt.Errorf("the default %s cannot be renamed: %w", g.kind, store.ErrInUse)
		}
		row.ID = cur.ID
		_, err = q.exec(ctx, `UPDATE `+g.table+` SET name = ?, description = ? WHERE id = ?`, row.Name, row.Description, row.ID)
		return s.uniqueName(err, g.kind, row.Name)
	})
	if err != nil {
		return groupRow{}, fmt.Errorf("update %s %q: %w", g.kind, name, err)
	}
	return row, nil
}

// deleteGroup refuses "default" and groups that still hold machines, both
// with errors wrapping store.ErrInUse.
func (s *Store) deleteGroup(ctx context.Context, g group, name string) error {
	if name == defaultGroup {
		return fmt.Errorf("delete %s %q: the default %s cannot be deleted: %w", g.kind, name, g.kind, store.ErrInUse)
	}
	err := s.inTx(ctx, func(q conn) error {
		row, err := s.getGroup(ctx, q, g, name)
		if err != nil {
			return err
		}
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM machines WHERE `+g.fk+` = ?`, row.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("it still holds %d machine(s): %w", n, store.ErrInUse)
		}
		_, err = q.exec(ctx, `DELETE FROM `+g.table+` WHERE id = ?`, row.ID)
		if err != nil && s.d.IsForeignKeyViolation(err) {
			// A machine moved in after the count (PostgreSQL only).
			return fmt.Errorf("it still holds machines: %w", store.ErrInUse)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %s %q: %w", g.kind, name, err)
	}
	return nil
}

// uniqueName turns a unique violation on a name into a *store.ConflictError.
func (s *Store) uniqueName(err error, kind, name string) error {
	if err != nil && s.d.IsUniqueViolation(err) {
		return &store.ConflictError{What: kind + " name " + name}
	}
	return err
}

func (s *Store) ListZones(ctx context.Context) ([]store.Zone, error) {
	rows, err := s.listGroups(ctx, zones)
	return convertAll[store.Zone](rows), err
}

func (s *Store) GetZone(ctx context.Context, name string) (store.Zone, error) {
	row, err := s.getGroup(ctx, s.conn(s.read), zones, name)
	return store.Zone(row), err
}

func (s *Store) CreateZone(ctx context.Context, z store.Zone) (store.Zone, error) {
	row, err := s.createGroup(ctx, zones, groupRow(z))
	return store.Zone(row), err
}

func (s *Store) UpdateZone(ctx context.Context, name string, z store.Zone) (store.Zone, error) {
	row, err := s.updateGroup(ctx, zones, name, groupRow(z))
	return store.Zone(row), err
}

func (s *Store) DeleteZone(ctx context.Context, name string) error {
	return s.deleteGroup(ctx, zones, name)
}

func (s *Store) ListPools(ctx context.Context) ([]store.Pool, error) {
	rows, err := s.listGroups(ctx, pools)
	return convertAll[store.Pool](rows), err
}

func (s *Store) GetPool(ctx context.Context, name string) (store.Pool, error) {
	row, err := s.getGroup(ctx, s.conn(s.read), pools, name)
	return store.Pool(row), err
}

func (s *Store) CreatePool(ctx context.Context, p store.Pool) (store.Pool, error) {
	row, err := s.createGroup(ctx, pools, groupRow(p))
	return store.Pool(row), err
}

func (s *Store) UpdatePool(ctx context.Context, name string, p store.Pool) (store.Pool, error) {
	row, err := s.updateGroup(ctx, pools, name, groupRow(p))
	return store.Pool(row), err
}

func (s *Store) DeletePool(ctx context.Context, name string) error {
	return s.deleteGroup(ctx, pools, name)
}

func convertAll[T ~struct {
	ID          int64
	Name        string
	Description string
}](rows []groupRow) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = T(r)
	}
	return out
}
