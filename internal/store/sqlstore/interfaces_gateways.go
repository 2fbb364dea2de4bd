package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

func (s *Store) DefaultGatewayLinks(ctx context.Context, systemID string) (v4, v6 int64, err error) {
	var a, b sql.NullInt64
	err = s.conn(s.read).queryRow(ctx, `SELECT gateway_link_ipv4, gateway_link_ipv6 FROM machines WHERE system_id = ?`, systemID).Scan(&a, &b)
	if err == sql.ErrNoRows {
		err = notFound("machine", systemID)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("default gateway links of %s: %w", systemID, err)
	}
	return a.Int64, b.Int64, nil
}

func (s *Store) SetDefaultGatewayLinks(ctx context.Context, systemID string, v4, v6 int64) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE machines SET gateway_link_ipv4 = ?, gateway_link_ipv6 = ?, version = version + 1 WHERE system_id = ?`,
		nullID(v4), nullID(v6), systemID)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 0 {
			err = notFound("machine", systemID)
		}
	}
	if err != nil {
		return fmt.Errorf("set default gateway links of %s: %w", systemID, err)
	}
	return nil
}
