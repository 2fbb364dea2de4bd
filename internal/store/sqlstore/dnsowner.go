package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// Addresses on DNS names. A resource keeps its addresses as a list in
// one column, so which names hold an address is a LIKE over that list;
// names are few, and these writes rare.

// listsIP is the condition that a dnsresources row lists the address
// given as its argument (namedIP's pattern).
const listsIP = `(',' || ip_addresses || ',') LIKE ?`

func namedIP(ip string) string { return "%," + ip + ",%" }

// NameAddress adds ip to the name r, making it (with r's owner) if it is
// new; check sees the name and its records under the row's lock.
func (s *Store) NameAddress(ctx context.Context, r store.DNSResource, ip string, check func(store.DNSResource, []store.DNSData) error) (store.DNSResource, error) {
	err := s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `INSERT INTO dnsresources (name, domain_id, address_ttl, ip_addresses, owner) VALUES (?, ?, ?, '', ?)
			ON CONFLICT (domain_id, name) DO NOTHING`, r.Name, r.DomainID, nullInt(r.AddressTTL), r.Owner); err != nil {
			return s.resourceConflict(err, r)
		}
		cur, held, err := s.holdName(ctx, q, "domain_id = ? AND name = ?", r.DomainID, r.Name)
		if err != nil {
			return err
		}
		if err := check(cur, held); err != nil {
			return err
		}
		r = cur
		if slices.Contains(r.IPs, ip) {
			return nil
		}
		r.IPs = append(r.IPs, ip)
		_, err = q.exec(ctx, `UPDATE dnsresources SET ip_addresses = ? WHERE id = ?`, strings.Join(r.IPs, ","), r.ID)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("name %s %q: %w", ip, r.Name, err)
	}
	return r, nil
}

// UnnameAddress takes ip off the names owned accepts.
func (s *Store) UnnameAddress(ctx context.Context, ip string, owned func(owner string) bool) error {
	err := s.inTx(ctx, func(q conn) error {
		var ids []int64
		err := eachRow(ctx, q, `SELECT id FROM dnsresources WHERE `+listsIP+` ORDER BY id`, []any{namedIP(ip)}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			ids = append(ids, id)
			return err
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := s.unnameOne(ctx, q, id, ip, owned); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("unname %s: %w", ip, err)
	}
	return nil
}

func (s *Store) unnameOne(ctx context.Context, q conn, id int64, ip string, owned func(string) bool) error {
	r, held, err := s.holdName(ctx, q, "id = ?", id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since it was listed: nothing to take off
	}
	if err != nil || !owned(r.Owner) {
		return err
	}
	r.IPs = slices.DeleteFunc(r.IPs, func(a string) bool { return a == ip })
	if len(r.IPs) == 0 && len(held) == 0 {
		_, err = q.exec(ctx, `DELETE FROM dnsresources WHERE id = ?`, id)
		return err
	}
	_, err = q.exec(ctx, `UPDATE dnsresources SET ip_addresses = ? WHERE id = ?`, strings.Join(r.IPs, ","), id)
	return err
}

// checkNamed refuses a user's reservation, or a STATIC link of a node,
// an address a DNS name of someone else's lists (someone else than the
// reserving user or the node's owner; a node nobody owns is
// administrators', as names made through dnsresources/ are): the name's
// owner holds it. It runs in the transaction that stores the address.
func (s *Store) checkNamed(ctx context.Context, q conn, a *store.IPAddress) error {
	if a.IP == "" {
		return nil
	}
	claimant := a.Owner
	switch {
	case a.AllocType == store.AllocUserReserved && a.InterfaceID == 0:
	case a.AllocType == store.AllocSticky && a.InterfaceID != 0:
		err := q.queryRow(ctx, `SELECT m.owner FROM interfaces i JOIN machines m ON m.id = i.machine_id
			WHERE i.id = ?`, a.InterfaceID).Scan(&claimant)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
	default:
		return nil
	}
	var n int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM dnsresources WHERE `+listsIP+` AND owner <> ?`, namedIP(a.IP), claimant).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return &store.ConflictError{What: "IP address " + a.IP}
	}
	return nil
}

// namedIPs marks in taken every address a DNS name lists.
func namedIPs(ctx context.Context, c conn, taken map[netip.Addr]bool) error {
	return eachRow(ctx, c, `SELECT ip_addresses FROM dnsresources WHERE ip_addresses <> ''`, nil, func(r *sql.Rows) error {
		var ips string
		if err := r.Scan(&ips); err != nil {
			return err
		}
		for _, ip := range strings.Split(ips, ",") {
			if a, err := netip.ParseAddr(ip); err == nil {
				taken[a.Unmap()] = true
			}
		}
		return nil
	})
}
