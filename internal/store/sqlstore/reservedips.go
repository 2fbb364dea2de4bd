package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// Reserved IPs and assigned addresses live in two tables, so no one
// unique index keeps them apart. Each write that could make them clash
// locks its subnet's row: a reservation exclusively, an assignment shared
// (assignments do not wait for each other). On PostgreSQL a reservation
// then sees every assignment committed before it, and an assignment
// every reservation; SQLite's writers run one at a time anyway.

const reservedColumns = `id, subnet_id, ip, mac, comment, created, updated`

func scanReserved(sc scanner) (store.ReservedIP, error) {
	var r store.ReservedIP
	err := sc.Scan(&r.ID, &r.SubnetID, &r.IP, &r.MAC, &r.Comment, timeDest{&r.Created}, timeDest{&r.Updated})
	return r, err
}

func (s *Store) ListReservedIPs(ctx context.Context) ([]store.ReservedIP, error) {
	out, err := listOf(ctx, s.conn(s.read), `SELECT `+reservedColumns+` FROM reserved_ips ORDER BY id`, nil, scanReserved)
	if err != nil {
		return nil, fmt.Errorf("list reserved ips: %w", err)
	}
	return out, nil
}

func (s *Store) GetReservedIP(ctx context.Context, id int64) (store.ReservedIP, error) {
	r, err := scanReserved(s.conn(s.read).queryRow(ctx, `SELECT `+reservedColumns+` FROM reserved_ips WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("reserved ip", strconv.FormatInt(id, 10))
	}
	return r, err
}

func (s *Store) CreateReservedIP(ctx context.Context, r store.ReservedIP) (store.ReservedIP, error) {
	r.MAC = strings.ToLower(r.MAC)
	r.Created = s.now()
	r.Updated = r.Created
	err := s.inTx(ctx, func(q conn) error {
		if err := s.lockSubnet(ctx, q, r.SubnetID, s.d.ForUpdateRow); err != nil {
			return err
		}
		var mac, holder, name string
		err := q.queryRow(ctx, `SELECT LOWER(COALESCE(NULLIF(i.mac, ''), a.mac)), COALESCE(m.system_id, a.owner), COALESCE(m.hostname, '')
			FROM ip_addresses a LEFT JOIN interfaces i ON i.id = a.interface_id LEFT JOIN machines m ON m.id = i.machine_id
			WHERE a.ip = ?`, r.IP).Scan(&mac, &holder, &name)
		switch {
		case err == nil && mac != r.MAC:
			return &store.ConflictError{What: "ip " + r.IP, Holder: holder, HolderName: name}
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		err = q.queryRow(ctx, `INSERT INTO reserved_ips (subnet_id, ip, mac, comment, created, updated) VALUES (?, ?, ?, ?, ?, ?)
			RETURNING id`, r.SubnetID, r.IP, r.MAC, r.Comment, s.tv(r.Created), s.tv(r.Updated)).Scan(&r.ID)
		if s.d.IsUniqueViolation(err) {
			var held string
			if q.queryRow(ctx, `SELECT mac FROM reserved_ips WHERE ip = ?`, r.IP).Scan(&held) == nil {
				return &store.ConflictError{What: "reserved ip " + r.IP, Holder: held}
			}
			return &store.ConflictError{What: "mac_address " + r.MAC}
		}
		return err
	})
	if err != nil {
		return r, fmt.Errorf("reserve %s for %s: %w", r.IP, r.MAC, err)
	}
	return r, nil
}

// lockSubnet locks the subnet's row with lock (ForUpdateRow or
// ForShareRow); a missing subnet is ErrNotFound.
func (s *Store) lockSubnet(ctx context.Context, q conn, id int64, lock string) error {
	var got int64
	err := q.queryRow(ctx, `SELECT id FROM subnets WHERE id = ?`+lock, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("subnet", strconv.FormatInt(id, 10))
	}
	return err
}

// checkReserved refuses to give ip to a link or address whose MAC is
// not the one it is reserved for. It runs in the transaction that
// assigns the address, under the subnet's shared lock.
func (s *Store) checkReserved(ctx context.Context, q conn, a *store.IPAddress) error {
	if a.IP == "" || a.SubnetID == 0 || a.AllocType == store.AllocDiscovered || a.AllocType == store.AllocDHCP {
		return nil
	}
	if err := s.lockSubnet(ctx, q, a.SubnetID, s.d.ForShareRow); err != nil {
		return err
	}
	var reservedFor string
	err := q.queryRow(ctx, `SELECT mac FROM reserved_ips WHERE ip = ?`, a.IP).Scan(&reservedFor)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if mac, err := s.linkMAC(ctx, q, a); err != nil || mac != reservedFor {
		if err != nil {
			return err
		}
		return &store.ReservedIPError{IP: a.IP, MAC: reservedFor}
	}
	return nil
}

// linkMAC is the MAC an address is for: its interface's, or the one
// recorded with a reservation.
func (s *Store) linkMAC(ctx context.Context, q conn, a *store.IPAddress) (string, error) {
	if a.InterfaceID == 0 {
		return strings.ToLower(a.MAC), nil
	}
	var mac string
	err := q.queryRow(ctx, `SELECT mac FROM interfaces WHERE id = ?`, a.InterfaceID).Scan(&mac)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("interface", strconv.FormatInt(a.InterfaceID, 10))
	}
	return strings.ToLower(mac), err
}

// reservationsOn are the subnet's reserved addresses by MAC.
func reservationsOn(ctx context.Context, c conn, subnetID int64) (map[string]string, error) {
	out := map[string]string{}
	err := eachRow(ctx, c, `SELECT mac, ip FROM reserved_ips WHERE subnet_id = ?`, []any{subnetID}, func(r *sql.Rows) error {
		var mac, ip string
		if err := r.Scan(&mac, &ip); err != nil {
			return err
		}
		out[mac] = ip
		return nil
	})
	return out, err
}

func (s *Store) UpdateReservedIPComment(ctx context.Context, id int64, comment string) (store.ReservedIP, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE reserved_ips SET comment = ?, updated = ? WHERE id = ?`, comment, s.tv(s.now()), id)
	if err != nil {
		return store.ReservedIP{}, fmt.Errorf("update reserved ip %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ReservedIP{}, notFound("reserved ip", strconv.FormatInt(id, 10))
	}
	return s.GetReservedIP(ctx, id)
}

func (s *Store) DeleteReservedIP(ctx context.Context, id int64) error {
	return deleteRow(ctx, s.conn(s.write), "reserved ip", `DELETE FROM reserved_ips WHERE id = ?`, id)
}
