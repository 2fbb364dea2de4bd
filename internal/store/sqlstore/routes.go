package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/anvilmetal/anvil/internal/store"
)

const routeColumns = `id, source_id, destination_id, gateway_ip, metric`

func scanRoute(sc scanner) (store.StaticRoute, error) {
	var r store.StaticRoute
	err := sc.Scan(&r.ID, &r.SourceID, &r.DestinationID, &r.GatewayIP, &r.Metric)
	return r, err
}

func (s *Store) ListStaticRoutes(ctx context.Context) ([]store.StaticRoute, error) {
	out, err := listRoutes(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list static routes: %w", err)
	}
	return out, nil
}

func listRoutes(ctx context.Context, c conn) ([]store.StaticRoute, error) {
	return listOf(ctx, c, `SELECT `+routeColumns+` FROM static_routes ORDER BY id`, nil, scanRoute)
}

func (s *Store) GetStaticRoute(ctx context.Context, id int64) (store.StaticRoute, error) {
	r, err := scanRoute(s.conn(s.read).queryRow(ctx, `SELECT `+routeColumns+` FROM static_routes WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("static route", strconv.FormatInt(id, 10))
	}
	return r, err
}

func (s *Store) CreateStaticRoute(ctx context.Context, r store.StaticRoute) (store.StaticRoute, error) {
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO static_routes (source_id, destination_id, gateway_ip, metric)
		VALUES (?, ?, ?, ?) RETURNING id`, r.SourceID, r.DestinationID, r.GatewayIP, r.Metric).Scan(&r.ID)
	if err != nil {
		return r, s.routeError(err, r)
	}
	return r, nil
}

func (s *Store) UpdateStaticRoute(ctx context.Context, r store.StaticRoute) (store.StaticRoute, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE static_routes SET source_id = ?, destination_id = ?, gateway_ip = ?, metric = ?
		WHERE id = ?`, r.SourceID, r.DestinationID, r.GatewayIP, r.Metric, r.ID)
	if err != nil {
		return r, s.routeError(err, r)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return r, notFound("static route", strconv.FormatInt(r.ID, 10))
	}
	return r, nil
}

func (s *Store) routeError(err error, r store.StaticRoute) error {
	switch {
	case s.d.IsUniqueViolation(err):
		return &store.ConflictError{What: fmt.Sprintf("static route from subnet %d to subnet %d via %s", r.SourceID, r.DestinationID, r.GatewayIP)}
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("static route: its source or destination subnet %w", store.ErrNotFound)
	}
	return fmt.Errorf("static route: %w", err)
}

func (s *Store) DeleteStaticRoute(ctx context.Context, id int64) error {
	return deleteRow(ctx, s.conn(s.write), "static route", `DELETE FROM static_routes WHERE id = ?`, id)
}
