package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

func (s *Store) PoolDriftPolicies(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := eachRow(ctx, s.conn(s.read), `SELECT name, drift_policy FROM pools`, nil, func(r *sql.Rows) error {
		var name, policy string
		if err := r.Scan(&name, &policy); err != nil {
			return err
		}
		out[name] = policy
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pool drift policies: %w", err)
	}
	return out, nil
}

func (s *Store) SetPoolDriftPolicy(ctx context.Context, pool, policy string) error {
	err := s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `UPDATE pools SET drift_policy = ? WHERE name = ?`, policy, pool)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("pool", pool)
		}
		_, err = q.exec(ctx, `UPDATE machines SET version = version + 1 WHERE pool_id = (SELECT id FROM pools WHERE name = ?)`, pool)
		return err
	})
	if err != nil {
		return fmt.Errorf("set drift policy of pool %s: %w", pool, err)
	}
	return nil
}
