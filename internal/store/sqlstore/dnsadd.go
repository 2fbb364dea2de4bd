package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
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
		var ttl sql.NullInt64
		var ips string
		if err := q.queryRow(ctx, `SELECT id, address_ttl, ip_addresses FROM dnsresources WHERE domain_id = ? AND name = ?`+s.d.ForUpdateRow,
			r.DomainID, r.Name).Scan(&r.ID, &ttl, &ips); err != nil {
			return err
		}
		r.AddressTTL, r.IPs = intPtr(ttl), nil
		if ips != "" {
			r.IPs = strings.Split(ips, ",")
		}
		held, err := dnsData(ctx, q, "WHERE dnsresource_id = ?", []any{r.ID})
		if err != nil {
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
