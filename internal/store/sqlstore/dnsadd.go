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

// AddDNSData makes the name if it has no row yet (a concurrent maker
// waits on the unique index, then finds the other's row), locks it, and
// checks and adds the record while holding it: what a check saw cannot
// change before the record is in.
func (s *Store) AddDNSData(ctx context.Context, r store.DNSResource, d store.DNSData, check func(store.DNSResource, []store.DNSData) error) (store.DNSResource, store.DNSData, error) {
	err := s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `INSERT INTO dnsresources (name, domain_id, address_ttl, ip_addresses) VALUES (?, ?, ?, ?)
			ON CONFLICT (domain_id, name) DO NOTHING`, r.Name, r.DomainID, nullInt(r.AddressTTL), strings.Join(r.IPs, ",")); err != nil {
			return s.resourceConflict(err, r)
		}
		var held []store.DNSData
		var err error
		if r, held, err = s.holdName(ctx, q, "domain_id = ? AND name = ?", r.DomainID, r.Name); err != nil {
			return err
		}
		if err := check(r, held); err != nil {
			return err
		}
		d.ResourceID = r.ID
		return q.queryRow(ctx, `INSERT INTO dnsdata (dnsresource_id, rrtype, rrdata, ttl) VALUES (?, ?, ?, ?) RETURNING id`,
			d.ResourceID, d.Type, d.Data, nullInt(d.TTL)).Scan(&d.ID)
	})
	if err != nil {
		return r, d, fmt.Errorf("add DNS data to %q: %w", r.Name, err)
	}
	return r, d, nil
}

// holdName locks the dnsresources row that where selects and reads it
// with its records: until the transaction ends no other writer can
// change what the name holds.
func (s *Store) holdName(ctx context.Context, q conn, where string, args ...any) (store.DNSResource, []store.DNSData, error) {
	var r store.DNSResource
	var ttl sql.NullInt64
	var ips string
	err := q.queryRow(ctx, `SELECT id, name, domain_id, address_ttl, ip_addresses, owner FROM dnsresources WHERE `+where+s.d.ForUpdateRow, args...).
		Scan(&r.ID, &r.Name, &r.DomainID, &ttl, &ips, &r.Owner)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil, notFound("dnsresource", fmt.Sprint(args...))
	}
	if err != nil {
		return r, nil, err
	}
	r.AddressTTL = intPtr(ttl)
	if ips != "" {
		r.IPs = strings.Split(ips, ",")
	}
	held, err := dnsData(ctx, q, "WHERE dnsresource_id = ?", []any{r.ID})
	return r, held, err
}

// UpdateDNSResource changes r; check, when given, first sees what r's
// row holds now (its addresses and records) under the row's lock.
func (s *Store) UpdateDNSResource(ctx context.Context, r store.DNSResource, check func(store.DNSResource, []store.DNSData) error) (store.DNSResource, error) {
	err := s.inTx(ctx, func(q conn) error {
		cur, held, err := s.holdName(ctx, q, "id = ?", r.ID)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(cur, held); err != nil {
				return err
			}
		}
		_, err = q.exec(ctx, `UPDATE dnsresources SET name = ?, domain_id = ?, address_ttl = ?, ip_addresses = ? WHERE id = ?`,
			r.Name, r.DomainID, nullInt(r.AddressTTL), strings.Join(r.IPs, ","), r.ID)
		return s.resourceConflict(err, r)
	})
	if err != nil {
		return r, fmt.Errorf("update DNS resource %d: %w", r.ID, err)
	}
	return r, nil
}

// UpdateDNSData changes d; check, when given, first sees what d's name
// holds now, under its row's lock.
func (s *Store) UpdateDNSData(ctx context.Context, d store.DNSData, check func(store.DNSResource, []store.DNSData) error) (store.DNSData, error) {
	err := s.inTx(ctx, func(q conn) error {
		cur, held, err := s.holdName(ctx, q, "id = ?", d.ResourceID)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(cur, held); err != nil {
				return err
			}
		}
		res, err := q.exec(ctx, `UPDATE dnsdata SET dnsresource_id = ?, rrtype = ?, rrdata = ?, ttl = ? WHERE id = ?`,
			d.ResourceID, d.Type, d.Data, nullInt(d.TTL), d.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("dnsresourcerecord", strconv.FormatInt(d.ID, 10))
		}
		return nil
	})
	if err != nil {
		return d, fmt.Errorf("update DNS data %d: %w", d.ID, err)
	}
	return d, nil
}
