package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"strconv"

	"github.com/anvilmetal/anvil/internal/network"
	"github.com/anvilmetal/anvil/internal/store"
)

const ipColumns = `a.id, a.ip, a.subnet_id, a.alloc_type, a.interface_id, a.owner, a.hostname, a.mac, a.created, a.updated,
	COALESCE(m.system_id, ''), COALESCE(m.hostname, ''), COALESCE(m.owner, ''), COALESCE(i.name, '')`

// ipFrom joins a link's interface and node, for what MAAS shows of them.
const ipFrom = ` FROM ip_addresses a LEFT JOIN interfaces i ON i.id = a.interface_id LEFT JOIN machines m ON m.id = i.machine_id`

func scanIP(sc scanner) (store.IPAddress, error) {
	var a store.IPAddress
	var ip sql.NullString
	var subnet, iface sql.NullInt64
	err := sc.Scan(&a.ID, &ip, &subnet, &a.AllocType, &iface, &a.Owner, &a.Hostname, &a.MAC, timeDest{&a.Created}, timeDest{&a.Updated},
		&a.Node.SystemID, &a.Node.Hostname, &a.Node.Owner, &a.Node.Interface)
	a.IP, a.SubnetID, a.InterfaceID = ip.String, subnet.Int64, iface.Int64
	return a, err
}

func (s *Store) ListIPAddresses(ctx context.Context, f store.IPAddressFilter) ([]store.IPAddress, error) {
	out, err := listIPAddresses(ctx, s.conn(s.read), f)
	if err != nil {
		return nil, fmt.Errorf("list ip addresses: %w", err)
	}
	return out, nil
}

func listIPAddresses(ctx context.Context, c conn, f store.IPAddressFilter) ([]store.IPAddress, error) {
	var w where
	if f.SubnetID != 0 {
		w.add("a.subnet_id = ?", f.SubnetID)
	}
	if f.Owner != "" {
		w.add("a.owner = ?", f.Owner)
	}
	if f.SystemID != "" {
		w.add("a.interface_id IN (SELECT i.id FROM interfaces i JOIN machines m ON m.id = i.machine_id WHERE m.system_id = ?)", f.SystemID)
	}
	return listOf(ctx, c, `SELECT `+ipColumns+ipFrom+w.sql()+` ORDER BY a.id`, w.args, scanIP)
}

// nullIP stores an empty address as NULL: the unique index skips NULLs.
func nullIP(ip string) any {
	if ip == "" {
		return nil
	}
	return ip
}

func (s *Store) CreateIPAddress(ctx context.Context, a store.IPAddress) (store.IPAddress, error) {
	err := s.inTx(ctx, func(q conn) error { return s.insertIP(ctx, q, &a) })
	if err != nil {
		return a, s.ipError(ctx, err, a)
	}
	return a, nil
}

func (s *Store) insertIP(ctx context.Context, q conn, a *store.IPAddress) error {
	if err := s.checkReserved(ctx, q, a); err != nil {
		return err
	}
	if err := s.checkNamed(ctx, q, a); err != nil {
		return err
	}
	a.Created = s.now()
	a.Updated = a.Created
	// The machine's row first, as UpdateMachine locks it first.
	if err := touchByInterface(ctx, q, a.InterfaceID); err != nil {
		return err
	}
	return q.queryRow(ctx, `INSERT INTO ip_addresses (ip, subnet_id, alloc_type, interface_id, owner, hostname, mac, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, nullIP(a.IP), nullID(a.SubnetID), a.AllocType, nullID(a.InterfaceID),
		a.Owner, a.Hostname, a.MAC, s.tv(a.Created), s.tv(a.Updated)).Scan(&a.ID)
}

// ipError explains a clash on the address as a ConflictError naming who
// holds it: a node's system_id or the reserving user.
func (s *Store) ipError(ctx context.Context, err error, a store.IPAddress) error {
	switch {
	case s.d.IsUniqueViolation(err):
		ce := &store.ConflictError{What: "IP address " + a.IP}
		_ = s.conn(s.read).queryRow(ctx, `SELECT COALESCE(m.system_id, a.owner), COALESCE(m.hostname, '') FROM ip_addresses a
			LEFT JOIN interfaces i ON i.id = a.interface_id LEFT JOIN machines m ON m.id = i.machine_id WHERE a.ip = ?`, a.IP).
			Scan(&ce.Holder, &ce.HolderName)
		return ce
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("ip address %s: its subnet or interface %w", a.IP, store.ErrNotFound)
	}
	return fmt.Errorf("ip address %s: %w", a.IP, err)
}

func (s *Store) UpdateIPAddress(ctx context.Context, a store.IPAddress) (store.IPAddress, error) {
	a.Updated = s.now()
	err := s.inTx(ctx, func(q conn) error {
		// The machine's row first, as UpdateMachine locks it first.
		if err := touchByAddress(ctx, q, a.ID); err != nil {
			return err
		}
		if a.InterfaceID == 0 {
			_ = q.queryRow(ctx, `SELECT COALESCE(interface_id, 0) FROM ip_addresses WHERE id = ?`, a.ID).Scan(&a.InterfaceID)
		}
		if err := s.checkReserved(ctx, q, &a); err != nil {
			return err
		}
		if err := s.checkNamed(ctx, q, &a); err != nil {
			return err
		}
		res, err := q.exec(ctx, `UPDATE ip_addresses SET ip = ?, subnet_id = ?, alloc_type = ?, owner = ?, hostname = ?,
			mac = ?, updated = ? WHERE id = ?`, nullIP(a.IP), nullID(a.SubnetID), a.AllocType, a.Owner, a.Hostname, a.MAC, s.tv(a.Updated), a.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("ip address", strconv.FormatInt(a.ID, 10))
		}
		return nil
	})
	if err != nil {
		return a, s.ipError(ctx, err, a)
	}
	return a, nil
}

func (s *Store) DeleteIPAddress(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(q conn) error { return deleteIP(ctx, q, id) })
}

// deleteIP deletes an ip_addresses row, bumping its machine's version.
func deleteIP(ctx context.Context, q conn, id int64) error {
	if err := touchByAddress(ctx, q, id); err != nil {
		return err
	}
	return deleteRow(ctx, q, "ip address", `DELETE FROM ip_addresses WHERE id = ?`, id)
}

// allocateAttempts bounds the picks of one allocation: each lost race
// means another allocation took an address, so this many in a row means
// the subnet is contended beyond reason. reloadEvery is how many lost
// races a pick goes on from what it read before it reads the subnet
// again.
const (
	allocateAttempts = 256
	reloadEvery      = 8
)

func (s *Store) AllocateIP(ctx context.Context, a store.IPAddress) (store.IPAddress, error) {
	if a.SubnetID == 0 {
		return a, errors.New("allocate ip: a subnet is required")
	}
	var n *network.Network
	var sn network.Subnet
	var taken map[netip.Addr]bool
	// want is the address reserved for the link's MAC on the subnet: an
	// AUTO link takes it, and nothing else. Others' reservations count
	// as taken.
	var want netip.Addr
	losses := 0
	for attempt := range allocateAttempts {
		if attempt%reloadEvery == 0 {
			err := s.inReadTx(ctx, func(c conn) error {
				var err error
				if n, err = loadNetwork(ctx, c); err != nil {
					return err
				}
				if taken, err = assignedIPs(ctx, c, a.SubnetID); err != nil {
					return err
				}
				// A machine given a rack's own address would answer ARP
				// for its rack.
				racks, err := rackAddrs(ctx, c)
				if err != nil {
					return err
				}
				maps.Copy(taken, racks)
				// An address a DNS name lists is that name's owner's.
				if err := namedIPs(ctx, c, taken); err != nil {
					return err
				}
				reserved, err := reservationsOn(ctx, c, a.SubnetID)
				if err != nil {
					return err
				}
				mac, err := s.linkMAC(ctx, c, &a)
				if err != nil {
					return err
				}
				for m, ip := range reserved {
					addr, err := netip.ParseAddr(ip)
					switch {
					case err != nil:
					case m == mac && a.AllocType == store.AllocAuto:
						want = addr
					default:
						taken[addr] = true
					}
				}
				return nil
			})
			if err != nil {
				return a, fmt.Errorf("allocate ip on subnet %d: %w", a.SubnetID, err)
			}
			var ok bool
			if sn, ok = n.Subnet(int(a.SubnetID)); !ok {
				return a, notFound("subnet", strconv.FormatInt(a.SubnetID, 10))
			}
		}
		ip, err := nextFree(n, sn, taken, losses)
		if want.IsValid() {
			ip, err = want, nil
		}
		if err != nil {
			return a, err
		}
		a.IP = ip.String()
		err = s.inTx(ctx, func(q conn) error {
			if a.ID == 0 {
				return s.insertIP(ctx, q, &a)
			}
			if err := s.checkReserved(ctx, q, &a); err != nil {
				return err
			}
			a.Updated = s.now()
			if err := touchByAddress(ctx, q, a.ID); err != nil {
				return err
			}
			res, err := q.exec(ctx, `UPDATE ip_addresses SET ip = ?, updated = ? WHERE id = ? AND subnet_id = ?`,
				a.IP, s.tv(a.Updated), a.ID, a.SubnetID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return notFound("ip address", strconv.FormatInt(a.ID, 10))
			}
			return nil
		})
		var re *store.ReservedIPError
		if want.IsValid() && err != nil && (s.d.IsUniqueViolation(err) || errors.As(err, &re)) {
			a.IP = ""
			return a, fmt.Errorf("allocate ip on subnet %d: the reserved ip %s seems to be in use by another host in the network: %w",
				a.SubnetID, want, store.ErrConflict)
		}
		var ce *store.ConflictError
		if err != nil && (s.d.IsUniqueViolation(err) || errors.As(err, &re) || errors.As(err, &ce)) {
			// Another allocation took it first, or someone's DNS name
			// holds it (checkNamed): mark it and pick again,
			// reading the subnet again only now and then.
			taken[ip] = true
			losses++
			continue
		}
		if err != nil {
			a.IP = ""
			return a, fmt.Errorf("allocate ip on subnet %d: %w", a.SubnetID, err)
		}
		return a, nil
	}
	a.IP = ""
	return a, fmt.Errorf("allocate ip on subnet %d: lost the race %d times", a.SubnetID, allocateAttempts)
}

// nextFree is network.NextFree less what is taken. After lost races it
// skips a random number of free addresses, up to twice as many after
// each loss (at most 255): allocations at once then spread over the
// free addresses instead of all chasing the lowest one. Where fewer are
// free than it would skip, it takes the lowest.
func nextFree(n *network.Network, sn network.Subnet, taken map[netip.Addr]bool, losses int) (netip.Addr, error) {
	skip := 0
	if losses > 0 {
		skip = rand.IntN(1 << min(losses, 8))
	}
	skipped := 0
	ip, err := network.NextFree(n, sn, func(ip netip.Addr) bool {
		if taken[ip] {
			return true
		}
		if skipped < skip {
			skipped++
			return true
		}
		return false
	})
	if err != nil && skip > 0 {
		return nextFree(n, sn, taken, 0)
	}
	return ip, err
}

// assignedIPs are the addresses rows hold on a subnet.
func assignedIPs(ctx context.Context, c conn, subnetID int64) (map[netip.Addr]bool, error) {
	out := map[netip.Addr]bool{}
	err := eachRow(ctx, c, `SELECT ip FROM ip_addresses WHERE subnet_id = ? AND ip IS NOT NULL`, []any{subnetID}, func(r *sql.Rows) error {
		var ip string
		if err := r.Scan(&ip); err != nil {
			return err
		}
		if a, err := netip.ParseAddr(ip); err == nil {
			out[a] = true
		}
		return nil
	})
	return out, err
}

func (s *Store) ReleaseAutoIPs(ctx context.Context, systemID string) error {
	err := s.inTx(ctx, func(q conn) error {
		_, err := q.exec(ctx, `UPDATE ip_addresses SET ip = NULL, updated = ? WHERE alloc_type = ? AND ip IS NOT NULL
			AND interface_id IN (SELECT i.id FROM interfaces i JOIN machines m ON m.id = i.machine_id WHERE m.system_id = ?)`,
			s.tv(s.now()), store.AllocAuto, systemID)
		if err != nil {
			return err
		}
		return touchSystemID(ctx, q, systemID)
	})
	if err != nil {
		return fmt.Errorf("release addresses of %s: %w", systemID, err)
	}
	return nil
}
