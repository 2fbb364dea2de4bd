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

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func intPtr(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

func (s *Store) ListDomains(ctx context.Context) ([]store.Domain, error) {
	var out []store.Domain
	err := eachRow(ctx, s.conn(s.read), `SELECT id, name, authoritative, ttl, is_default FROM domains ORDER BY id`, nil, func(r *sql.Rows) error {
		var d store.Domain
		var ttl sql.NullInt64
		err := r.Scan(&d.ID, &d.Name, &d.Authoritative, &ttl, &d.Default)
		d.TTL = intPtr(ttl)
		out = append(out, d)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return out, nil
}

func (s *Store) CreateDomain(ctx context.Context, d store.Domain) (store.Domain, error) {
	d.Default = false
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO domains (name, authoritative, ttl) VALUES (?, ?, ?) RETURNING id`,
		d.Name, d.Authoritative, nullInt(d.TTL)).Scan(&d.ID)
	if err != nil {
		return d, fmt.Errorf("create domain %q: %w", d.Name, s.uniqueName(err, "domain", d.Name))
	}
	return d, nil
}

// UpdateDomain changes a domain's name, authority and TTL; whether it is
// the default changes only through SetDefaultDomain.
func (s *Store) UpdateDomain(ctx context.Context, d store.Domain) (store.Domain, error) {
	res, err := s.conn(s.write).exec(ctx, `UPDATE domains SET name = ?, authoritative = ?, ttl = ? WHERE id = ?`,
		d.Name, d.Authoritative, nullInt(d.TTL), d.ID)
	if err != nil {
		return d, fmt.Errorf("update domain %d: %w", d.ID, s.uniqueName(err, "domain", d.Name))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return d, notFound("domain", strconv.FormatInt(d.ID, 10))
	}
	return d, nil
}

func (s *Store) DeleteDomain(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(q conn) error {
		var name string
		var def bool
		err := q.queryRow(ctx, `SELECT name, is_default FROM domains WHERE id = ?`+s.d.ForUpdateRow, id).Scan(&name, &def)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("domain", strconv.FormatInt(id, 10))
		}
		if err != nil {
			return err
		}
		if def {
			return fmt.Errorf("domain %s is the default: %w", name, store.ErrInUse)
		}
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM dnsresources WHERE domain_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("domain %s holds %d DNS resources: %w", name, n, store.ErrInUse)
		}
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM machines WHERE domain = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("domain %s holds %d machines: %w", name, n, store.ErrInUse)
		}
		_, err = q.exec(ctx, `DELETE FROM domains WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete domain %d: %w", id, err)
	}
	return nil
}

func (s *Store) SetDefaultDomain(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(q conn) error {
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM domains WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return notFound("domain", strconv.FormatInt(id, 10))
		}
		if _, err := q.exec(ctx, `UPDATE domains SET is_default = ? WHERE is_default`, false); err != nil {
			return err
		}
		_, err := q.exec(ctx, `UPDATE domains SET is_default = ? WHERE id = ?`, true, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("set default domain %d: %w", id, err)
	}
	return nil
}

func (s *Store) ListDNSResources(ctx context.Context) ([]store.DNSResource, error) {
	var out []store.DNSResource
	err := eachRow(ctx, s.conn(s.read), `SELECT id, name, domain_id, address_ttl, ip_addresses, owner FROM dnsresources ORDER BY id`, nil, func(r *sql.Rows) error {
		var d store.DNSResource
		var ttl sql.NullInt64
		var ips string
		err := r.Scan(&d.ID, &d.Name, &d.DomainID, &ttl, &ips, &d.Owner)
		d.AddressTTL = intPtr(ttl)
		if ips != "" {
			d.IPs = strings.Split(ips, ",")
		}
		out = append(out, d)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list DNS resources: %w", err)
	}
	return out, nil
}

func (s *Store) resourceConflict(err error, r store.DNSResource) error {
	if s.d.IsUniqueViolation(err) {
		return &store.ConflictError{What: "dnsresource name " + r.Name}
	}
	if s.d.IsForeignKeyViolation(err) {
		return notFound("domain", strconv.FormatInt(r.DomainID, 10))
	}
	return err
}

func (s *Store) CreateDNSResource(ctx context.Context, r store.DNSResource) (store.DNSResource, error) {
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO dnsresources (name, domain_id, address_ttl, ip_addresses, owner) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		r.Name, r.DomainID, nullInt(r.AddressTTL), strings.Join(r.IPs, ","), r.Owner).Scan(&r.ID)
	if err != nil {
		return r, fmt.Errorf("create DNS resource %q: %w", r.Name, s.resourceConflict(err, r))
	}
	return r, nil
}

func (s *Store) DeleteDNSResource(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `DELETE FROM dnsdata WHERE dnsresource_id = ?`, id); err != nil {
			return err
		}
		res, err := q.exec(ctx, `DELETE FROM dnsresources WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("dnsresource", strconv.FormatInt(id, 10))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete DNS resource %d: %w", id, err)
	}
	return nil
}

func (s *Store) ListDNSData(ctx context.Context) ([]store.DNSData, error) {
	out, err := dnsData(ctx, s.conn(s.read), "", nil)
	if err != nil {
		return nil, fmt.Errorf("list DNS data: %w", err)
	}
	return out, nil
}

// dnsData lists the dnsdata rows that match where (all for ""), by id.
func dnsData(ctx context.Context, c conn, where string, args []any) ([]store.DNSData, error) {
	var out []store.DNSData
	err := eachRow(ctx, c, `SELECT id, dnsresource_id, rrtype, rrdata, ttl FROM dnsdata `+where+` ORDER BY id`, args, func(r *sql.Rows) error {
		var d store.DNSData
		var ttl sql.NullInt64
		err := r.Scan(&d.ID, &d.ResourceID, &d.Type, &d.Data, &ttl)
		d.TTL = intPtr(ttl)
		out = append(out, d)
		return err
	})
	return out, err
}

func (s *Store) CreateDNSData(ctx context.Context, d store.DNSData) (store.DNSData, error) {
	err := s.conn(s.write).queryRow(ctx, `INSERT INTO dnsdata (dnsresource_id, rrtype, rrdata, ttl) VALUES (?, ?, ?, ?) RETURNING id`,
		d.ResourceID, d.Type, d.Data, nullInt(d.TTL)).Scan(&d.ID)
	if err != nil && s.d.IsForeignKeyViolation(err) {
		err = notFound("dnsresource", strconv.FormatInt(d.ResourceID, 10))
	}
	if err != nil {
		return d, fmt.Errorf("create DNS data: %w", err)
	}
	return d, nil
}

func (s *Store) DeleteDNSData(ctx context.Context, id int64) error {
	res, err := s.conn(s.write).exec(ctx, `DELETE FROM dnsdata WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete DNS data %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("dnsresourcerecord", strconv.FormatInt(id, 10))
	}
	return nil
}

func (s *Store) DNSSerial(ctx context.Context, hash string) (uint32, error) {
	var serial int64
	err := s.inTx(ctx, func(q conn) error {
		var cur string
		if err := q.queryRow(ctx, `SELECT serial, hash FROM dns_serial WHERE id = 1`+s.d.ForUpdateRow).Scan(&serial, &cur); err != nil {
			return err
		}
		if cur == hash {
			return nil
		}
		// Serials are 32 bits and compared modulo 2^32 (RFC 1982); 0 is
		// skipped as some secondaries treat it as unset.
		serial = serial%(1<<32-1) + 1
		_, err := q.exec(ctx, `UPDATE dns_serial SET serial = ?, hash = ? WHERE id = 1`, serial, hash)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("dns serial: %w", err)
	}
	return uint32(serial), nil
}
