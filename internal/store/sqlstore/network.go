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

const subnetColumns = `id, name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds`

func scanSubnet(sc interface{ Scan(...any) error }) (store.Subnet, error) {
	var s store.Subnet
	var dns string
	err := sc.Scan(&s.ID, &s.Name, &s.CIDR, &s.Gateway, &dns, &s.Domain, &s.DHCP, &s.LeaseSeconds)
	if dns != "" {
		s.DNSServers = strings.Split(dns, ",")
	}
	return s, err
}

func (s *Store) ListSubnets(ctx context.Context) ([]store.Subnet, error) {
	var out []store.Subnet
	err := eachRow(ctx, s.conn(s.read), `SELECT `+subnetColumns+` FROM subnets ORDER BY name`, nil, func(r *sql.Rows) error {
		sn, err := scanSubnet(r)
		out = append(out, sn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list subnets: %w", err)
	}
	return out, nil
}

func (s *Store) GetSubnet(ctx context.Context, id int64) (store.Subnet, error) {
	sn, err := scanSubnet(s.conn(s.read).queryRow(ctx, `SELECT `+subnetColumns+` FROM subnets WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sn, notFound("subnet", strconv.FormatInt(id, 10))
	}
	return sn, err
}

func (s *Store) CreateSubnet(ctx context.Context, sn store.Subnet) (store.Subnet, error) {
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO subnets (name, cidr, gateway, dns_servers, domain, dhcp, lease_seconds)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, sn.Name, sn.CIDR, sn.Gateway, strings.Join(sn.DNSServers, ","),
		sn.Domain, sn.DHCP, sn.LeaseSeconds).Scan(&sn.ID)
	if err != nil {
		return sn, s.subnetConflict(err, sn)
	}
	return sn, nil
}

func (s *Store) UpdateSubnet(ctx context.Context, sn store.Subnet) (store.Subnet, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE subnets SET name = ?, cidr = ?, gateway = ?, dns_servers = ?, domain = ?,
		dhcp = ?, lease_seconds = ? WHERE id = ?`, sn.Name, sn.CIDR, sn.Gateway, strings.Join(sn.DNSServers, ","),
		sn.Domain, sn.DHCP, sn.LeaseSeconds, sn.ID)
	if err != nil {
		return sn, s.subnetConflict(err, sn)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return sn, notFound("subnet", strconv.FormatInt(sn.ID, 10))
	}
	return sn, nil
}

func (s *Store) subnetConflict(err error, sn store.Subnet) error {
	if s.d.IsUniqueViolation(err) {
		return &store.ConflictError{What: fmt.Sprintf("subnet name %q or cidr %s", sn.Name, sn.CIDR)}
	}
	return fmt.Errorf("subnet %s: %w", sn.CIDR, err)
}

func (s *Store) DeleteSubnet(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `DELETE FROM ipranges WHERE subnet_id = ?`, id); err != nil {
			return err
		}
		res, err := q.exec(ctx, `DELETE FROM subnets WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("subnet", strconv.FormatInt(id, 10))
		}
		return nil
	})
	return err
}

func (s *Store) ListIPRanges(ctx context.Context) ([]store.IPRange, error) {
	var out []store.IPRange
	err := eachRow(ctx, s.conn(s.read), `SELECT id, subnet_id, type, start_ip, end_ip, comment FROM ipranges ORDER BY subnet_id, id`, nil,
		func(r *sql.Rows) error {
			var ir store.IPRange
			err := r.Scan(&ir.ID, &ir.SubnetID, &ir.Type, &ir.Start, &ir.End, &ir.Comment)
			out = append(out, ir)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("list ip ranges: %w", err)
	}
	return out, nil
}

func (s *Store) CreateIPRange(ctx context.Context, ir store.IPRange) (store.IPRange, error) {
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO ipranges (subnet_id, type, start_ip, end_ip, comment) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		ir.SubnetID, ir.Type, ir.Start, ir.End, ir.Comment).Scan(&ir.ID)
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return ir, notFound("subnet", strconv.FormatInt(ir.SubnetID, 10))
		}
		return ir, fmt.Errorf("create ip range: %w", err)
	}
	return ir, nil
}

func (s *Store) DeleteIPRange(ctx context.Context, id int64) error {
	res, err := s.conn(s.write).exec(ctx, `DELETE FROM ipranges WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete ip range: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("ip range", strconv.FormatInt(id, 10))
	}
	return nil
}
