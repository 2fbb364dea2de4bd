package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

const subnetColumns = `id, name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds, vlan_id, managed, allow_dns,
	allow_proxy, rdns_mode, active_discovery, disabled_boot_architectures, description`

func scanSubnet(sc scanner) (store.Subnet, error) {
	var s store.Subnet
	var dns, arches string
	err := sc.Scan(&s.ID, &s.Name, &s.CIDR, &s.Gateway, &dns, &s.Domain, &s.DHCP, &s.LeaseSeconds, &s.VLANID, &s.Managed,
		&s.AllowDNS, &s.AllowProxy, &s.RDNSMode, &s.ActiveDiscovery, &arches, &s.Description)
	s.DNSServers = splitList(dns)
	s.DisabledBootArchitectures = splitList(arches)
	return s, err
}

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface{ Scan(...any) error }

// listOf runs query and scans each row with scan.
func listOf[T any](ctx context.Context, c conn, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	var out []T
	err := eachRow(ctx, c, query, args, func(r *sql.Rows) error {
		v, err := scan(r)
		out = append(out, v)
		return err
	})
	return out, err
}

// splitList reads a comma-separated column; empty is none.
func splitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func (s *Store) ListSubnets(ctx context.Context) ([]store.Subnet, error) {
	out, err := listSubnets(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list subnets: %w", err)
	}
	return out, nil
}

func listSubnets(ctx context.Context, c conn) ([]store.Subnet, error) {
	return listOf(ctx, c, `SELECT `+subnetColumns+` FROM subnets ORDER BY name`, nil, scanSubnet)
}

func (s *Store) GetSubnet(ctx context.Context, id int64) (store.Subnet, error) {
	sn, err := scanSubnet(s.conn(s.read).queryRow(ctx, `SELECT `+subnetColumns+` FROM subnets WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sn, notFound("subnet", strconv.FormatInt(id, 10))
	}
	return sn, err
}

// CreateSubnet stores sn; a VLANID of 0 puts it on fabric-0's untagged
// VLAN, where every subnet of a store without a network model lived.
func (s *Store) CreateSubnet(ctx context.Context, sn store.Subnet) (store.Subnet, error) {
	err := s.inTx(ctx, func(q conn) error {
		if sn.VLANID == 0 {
			v, err := vlanByVID(ctx, q, store.DefaultFabricID, 0)
			if err != nil {
				return err
			}
			sn.VLANID = v.ID
		}
		return q.queryRow(ctx, `INSERT INTO subnets (name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds, vlan_id,
			managed, allow_dns, allow_proxy, rdns_mode, active_discovery, disabled_boot_architectures, description)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, subnetArgs(sn)...).Scan(&sn.ID)
	})
	if err != nil {
		return sn, s.subnetConflict(err, sn)
	}
	return sn, nil
}

func subnetArgs(sn store.Subnet) []any {
	return []any{sn.Name, sn.CIDR, sn.Gateway, strings.Join(sn.DNSServers, ","), sn.Domain, sn.DHCP, sn.LeaseSeconds, sn.VLANID,
		sn.Managed, sn.AllowDNS, sn.AllowProxy, sn.RDNSMode, sn.ActiveDiscovery, strings.Join(sn.DisabledBootArchitectures, ","),
		sn.Description}
}

func (s *Store) UpdateSubnet(ctx context.Context, sn store.Subnet) (store.Subnet, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE subnets SET name = ?, cidr = ?, gateway = ?, dns_servers = ?, domain = ?,
		dhcp = ?, lease_seconds = ?, vlan_id = ?, managed = ?, allow_dns = ?, allow_proxy = ?, rdns_mode = ?,
		active_discovery = ?, disabled_boot_architectures = ?, description = ? WHERE id = ?`, append(subnetArgs(sn), sn.ID)...)
	if err != nil {
		return sn, s.subnetConflict(err, sn)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return sn, notFound("subnet", strconv.FormatInt(sn.ID, 10))
	}
	return sn, nil
}

func (s *Store) subnetConflict(err error, sn store.Subnet) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return err
	case s.d.IsUniqueViolation(err):
		return &store.ConflictError{What: fmt.Sprintf("subnet name %q or cidr %s", sn.Name, sn.CIDR)}
	case s.d.IsForeignKeyViolation(err):
		return notFound("vlan", strconv.FormatInt(sn.VLANID, 10))
	}
	return fmt.Errorf("subnet %s: %w", sn.CIDR, err)
}

// DeleteSubnet deletes the subnet with its ranges and static routes;
// ErrInUse while addresses are assigned or reserved on it.
func (s *Store) DeleteSubnet(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(q conn) error {
		if err := inUse(ctx, q, `SELECT COUNT(*) FROM ip_addresses WHERE subnet_id = ?`, id, "subnet", "IP addresses"); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM ipranges WHERE subnet_id = ?`, id); err != nil {
			return err
		}
		return deleteRow(ctx, q, "subnet", `DELETE FROM subnets WHERE id = ?`, id)
	})
	return err
}

// inUse fails with ErrInUse when the count query finds rows referring to
// the object.
func inUse(ctx context.Context, q conn, countSQL string, id int64, what, users string) error {
	var n int
	if err := q.queryRow(ctx, countSQL, id).Scan(&n); err != nil {
		return fmt.Errorf("%s %d: %w", what, id, err)
	}
	if n > 0 {
		return fmt.Errorf("%s %d has %d %s: %w", what, id, n, users, store.ErrInUse)
	}
	return nil
}

// deleteRow runs a DELETE of one row by id; no row is ErrNotFound.
func deleteRow(ctx context.Context, q conn, what, query string, id int64, more ...any) error {
	res, err := q.exec(ctx, query, append([]any{id}, more...)...)
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(what, strconv.FormatInt(id, 10))
	}
	return nil
}

const rangeColumns = `id, subnet_id, type, start_ip, end_ip, comment, owner`

func scanRange(sc scanner) (store.IPRange, error) {
	var ir store.IPRange
	err := sc.Scan(&ir.ID, &ir.SubnetID, &ir.Type, &ir.Start, &ir.End, &ir.Comment, &ir.Owner)
	return ir, err
}

func (s *Store) ListIPRanges(ctx context.Context) ([]store.IPRange, error) {
	out, err := listRanges(ctx, s.conn(s.read))
	if err != nil {
		return nil, fmt.Errorf("list ip ranges: %w", err)
	}
	return out, nil
}

func listRanges(ctx context.Context, c conn) ([]store.IPRange, error) {
	return listOf(ctx, c, `SELECT `+rangeColumns+` FROM ipranges ORDER BY subnet_id, id`, nil, scanRange)
}

func (s *Store) GetIPRange(ctx context.Context, id int64) (store.IPRange, error) {
	ir, err := scanRange(s.conn(s.read).queryRow(ctx, `SELECT `+rangeColumns+` FROM ipranges WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ir, notFound("ip range", strconv.FormatInt(id, 10))
	}
	return ir, err
}

func (s *Store) CreateIPRange(ctx context.Context, ir store.IPRange) (store.IPRange, error) {
	err := s.inTx(ctx, func(q conn) error {
		if err := s.rangeClear(ctx, q, ir); err != nil {
			return err
		}
		return q.queryRow(ctx, `INSERT INTO ipranges (subnet_id, type, start_ip, end_ip, comment, owner)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, ir.SubnetID, ir.Type, ir.Start, ir.End, ir.Comment, ir.Owner).Scan(&ir.ID)
	})
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return ir, notFound("subnet", strconv.FormatInt(ir.SubnetID, 10))
		}
		return ir, fmt.Errorf("create ip range: %w", err)
	}
	return ir, nil
}

func (s *Store) UpdateIPRange(ctx context.Context, ir store.IPRange) (store.IPRange, error) {
	err := s.inTx(ctx, func(q conn) error {
		if err := s.rangeClear(ctx, q, ir); err != nil {
			return err
		}
		res, err := q.exec(ctx, `UPDATE ipranges SET subnet_id = ?, type = ?, start_ip = ?, end_ip = ?, comment = ?,
		owner = ? WHERE id = ?`, ir.SubnetID, ir.Type, ir.Start, ir.End, ir.Comment, ir.Owner, ir.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("ip range", strconv.FormatInt(ir.ID, 10))
		}
		return nil
	})
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return ir, notFound("subnet", strconv.FormatInt(ir.SubnetID, 10))
		}
		return ir, fmt.Errorf("update ip range: %w", err)
	}
	return ir, nil
}

// rangeClear refuses a dynamic range over an address the subnet already
// gives out: a reserved IP, a user's reservation, an AUTO or STATIC link.
// It holds the subnet's row, which every such write shares, so none can
// land in the range between this check and the range's write.
func (s *Store) rangeClear(ctx context.Context, q conn, ir store.IPRange) error {
	if ir.Type != string(network.RangeDynamic) {
		return nil
	}
	if err := s.lockSubnet(ctx, q, ir.SubnetID, s.d.ForUpdateRow); err != nil {
		return err
	}
	var was *network.IPRange
	if ir.ID != 0 {
		old, err := scanRange(q.queryRow(ctx, `SELECT `+rangeColumns+` FROM ipranges WHERE id = ?`, ir.ID))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err == nil {
			nr := store.NetworkRange(old)
			was = &nr
		}
	}
	var held []netip.Addr
	err := eachRow(ctx, q, `SELECT ip FROM ip_addresses WHERE subnet_id = ? AND ip IS NOT NULL AND alloc_type IN (?, ?, ?)
		UNION ALL SELECT ip FROM reserved_ips WHERE subnet_id = ?`,
		[]any{ir.SubnetID, store.AllocAuto, store.AllocSticky, store.AllocUserReserved, ir.SubnetID}, func(r *sql.Rows) error {
			var ip string
			if err := r.Scan(&ip); err != nil {
				return err
			}
			if a, err := netip.ParseAddr(ip); err == nil {
				held = append(held, a.Unmap())
			}
			return nil
		})
	if err != nil {
		return err
	}
	return network.ValidateRangeOverHeld(store.NetworkRange(ir), was, held).Err()
}

func (s *Store) DeleteIPRange(ctx context.Context, id int64) error {
	return deleteRow(ctx, s.conn(s.write), "ip range", `DELETE FROM ipranges WHERE id = ?`, id)
}
