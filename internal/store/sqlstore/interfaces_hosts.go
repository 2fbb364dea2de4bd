package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

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
	// Reserved IPs, for MACs no node's address already pins on the
	// subnet (as MAAS, which would otherwise write the host twice).
	known := map[string]bool{}
	for _, h := range out {
		known[strconv.FormatInt(h.SubnetID, 10)+" "+strings.ToLower(h.MAC)] = true
	}
	rs, err := s.ListReservedIPs(ctx)
	if err != nil {
		return nil, fmt.Errorf("dhcp hosts: %w", err)
	}
	for _, r := range rs {
		if !known[strconv.FormatInt(r.SubnetID, 10)+" "+r.MAC] {
			out = append(out, store.DHCPHost{SubnetID: r.SubnetID, MAC: r.MAC, IP: r.IP})
		}
	}
	return out, nil
}
