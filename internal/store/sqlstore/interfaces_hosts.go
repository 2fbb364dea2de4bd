package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

func (s *Store) DHCPHosts(ctx context.Context) ([]store.DHCPHost, error) {
	var out []store.DHCPHost
	err := eachRow(ctx, s.conn(s.read), `SELECT a.subnet_id, COALESCE(NULLIF(i.mac, ''), a.mac), a.ip, COALESCE(m.hostname, a.hostname)
		FROM ip_addresses a
		LEFT JOIN interfaces i ON i.id = a.interface_id
		LEFT JOIN machines m ON m.id = i.machine_id
		WHERE a.ip IS NOT NULL AND a.subnet_id IS NOT NULL AND a.alloc_type IN (?, ?, ?)
		  AND COALESCE(NULLIF(i.mac, ''), a.mac) <> ''
		ORDER BY a.id`, []any{store.AllocAuto, store.AllocSticky, store.AllocUserReserved}, func(r *sql.Rows) error {
		var h store.DHCPHost
		if err := r.Scan(&h.SubnetID, &h.MAC, &h.IP, &h.Hostname); err != nil {
			return err
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dhcp hosts: %w", err)
	}
	return out, nil
}
