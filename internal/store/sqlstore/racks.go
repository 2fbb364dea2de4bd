package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"strings"

	"github.com/anvilmetal/anvil/internal/store"
)

// RegionsSeen lists every region recorded with when it was last seen.
func (s *Store) RegionsSeen(ctx context.Context) ([]store.RegionSeen, error) {
	var out []store.RegionSeen
	err := eachRow(ctx, s.conn(s.read), `SELECT url, seen FROM regions ORDER BY seen DESC, url`, nil, func(r *sql.Rows) error {
		var g store.RegionSeen
		if err := r.Scan(&g.URL, timeDest{&g.Seen}); err != nil {
			return err
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("regions: %w", err)
	}
	return out, nil
}

// TouchRack records the rack as seen at r.Seen (zero: now), replacing
// what it said before.
// An enrolled rack's row is only updated: one deleted (revoked) while its
// stream ran is ErrNotFound, not recorded again.
func (s *Store) TouchRack(ctx context.Context, r store.Rack) error {
	if r.Enrolled {
		return s.updateEnrolled(ctx, r, `hostname = ?, address = ?, version = ?, seen = ?, dns_addresses = ?`,
			r.Hostname, r.Address, r.Version, s.tv(s.orNow(r.Seen)), strings.Join(r.DNS, ","))
	}
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO racks (system_id, hostname, address, version, seen, dns_addresses) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (system_id) DO UPDATE SET hostname = excluded.hostname, address = excluded.address,
		version = excluded.version, seen = excluded.seen, dns_addresses = excluded.dns_addresses`,
		r.SystemID, r.Hostname, r.Address, r.Version, s.tv(s.orNow(r.Seen)), strings.Join(r.DNS, ","))
	if err != nil {
		return fmt.Errorf("touch rack %s: %w", r.SystemID, err)
	}
	return nil
}

// updateEnrolled sets columns of an enrolled rack's row.
func (s *Store) updateEnrolled(ctx context.Context, r store.Rack, set string, args ...any) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE racks SET `+set+` WHERE system_id = ? AND enrolled = ?`, append(args, r.SystemID, true)...)
	if err != nil {
		return fmt.Errorf("record rack %s: %w", r.SystemID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("enrolled rack", r.SystemID)
	}
	return nil
}

// ListRacks lists the racks recorded, by hostname.
func (s *Store) ListRacks(ctx context.Context) ([]store.Rack, error) {
	return listRacks(ctx, s.conn(s.read))
}

// RackAddresses are the racks' own addresses (see store.Rack.Addresses).
func (s *Store) RackAddresses(ctx context.Context) (map[netip.Addr]bool, error) {
	return rackAddrs(ctx, s.conn(s.read))
}

func rackAddrs(ctx context.Context, c conn) (map[netip.Addr]bool, error) {
	racks, err := listRacks(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[netip.Addr]bool{}
	for _, rk := range racks {
		for _, a := range rk.Addresses() {
			out[a] = true
		}
	}
	return out, nil
}

func listRacks(ctx context.Context, c conn) ([]store.Rack, error) {
	var out []store.Rack
	err := eachRow(ctx, c, `SELECT system_id, hostname, address, version, seen, dns_addresses, enrolled, report, reported, bmc_networks, served_subnets
		FROM racks ORDER BY hostname, system_id`, nil,
		func(r *sql.Rows) error {
			var k store.Rack
			var dns, bmcs, subnets string
			if err := r.Scan(&k.SystemID, &k.Hostname, &k.Address, &k.Version, timeDest{&k.Seen}, &dns, &k.Enrolled, &k.Report, timeDest{&k.Reported},
				&bmcs, &subnets); err != nil {
				return err
			}
			k.DNS, k.BMCNetworks, k.Subnets = splitList(dns), splitList(bmcs), splitList(subnets)
			k.Served = prefixes(k.Subnets)
			out = append(out, k)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("racks: %w", err)
	}
	if err := vlanServed(ctx, c, out); err != nil {
		return nil, err
	}
	return out, nil
}

// vlanServed adds to each rack's Served the subnets of the VLANs an
// administrator made it primary or secondary rack of.
func vlanServed(ctx context.Context, c conn, racks []store.Rack) error {
	at := make(map[string]int, len(racks))
	for i, k := range racks {
		at[k.SystemID] = i
	}
	err := eachRow(ctx, c, `SELECT v.primary_rack, v.secondary_rack, s.cidr FROM subnets s JOIN vlans v ON v.id = s.vlan_id
		WHERE v.primary_rack <> '' OR v.secondary_rack <> ''`, nil, func(r *sql.Rows) error {
		var primary, secondary, cidr string
		if err := r.Scan(&primary, &secondary, &cidr); err != nil {
			return err
		}
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil
		}
		for _, id := range []string{primary, secondary} {
			if i, ok := at[id]; ok && id != "" {
				racks[i].Served = append(racks[i].Served, p.Masked())
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("subnets racks serve: %w", err)
	}
	return nil
}

// prefixes parses stored CIDRs, skipping any that do not parse.
func prefixes(ss []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}
