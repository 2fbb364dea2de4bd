package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// rackSecretLen is long enough that guessing one is hopeless in the
// hour it lives; it is typed once, on the rack's command line.
const rackSecretLen = 40

var hashSecret = store.HashSecret

// CreateRackSecret issues a one-time enrolment secret valid until
// expires, granting the rack that spends it bmcNetworks.
func (s *Store) CreateRackSecret(ctx context.Context, createdBy string, expires time.Time, bmcNetworks ...string) (string, error) {
	secret := randomString(rackSecretLen, alphanumerics)
	now := s.now()
	// Spent and lapsed secrets are kept a day, for the record, then go.
	if _, err := s.conn(s.write).exec(ctx, `DELETE FROM rack_secrets WHERE expires < ?`, s.tv(now.Add(-24*time.Hour))); err != nil {
		return "", fmt.Errorf("forget old rack secrets: %w", err)
	}
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO rack_secrets (hash, created_by, created, expires, bmc_networks) VALUES (?, ?, ?, ?, ?)`,
		hashSecret(secret), createdBy, s.tv(now), s.tv(expires), strings.Join(bmcNetworks, ","))
	if err != nil {
		return "", fmt.Errorf("create rack secret: %w", err)
	}
	return secret, nil
}

// EnrolRack spends the secret and records the rack with a credential of
// its own. The secret is spent by a conditional update, so two racks
// presenting it at once cannot both enrol.
func (s *Store) EnrolRack(ctx context.Context, secret string, r store.Rack) (store.RackCredential, error) {
	c := store.RackCredential{
		ConsumerKey: randomString(consumerKeyLen, alphanumerics),
		TokenKey:    randomString(tokenKeyLen, alphanumerics),
		Secret:      randomString(tokenSecretLen, alphanumerics),
		Hostname:    r.Hostname,
	}
	c.SecretHash = hashSecret(c.Secret)
	now := s.now()
	err := s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `UPDATE rack_secrets SET used = ? WHERE hash = ? AND used IS NULL AND expires > ?`,
			s.tv(now), hashSecret(secret), s.tv(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("enrolment secret %w (unknown, already used or expired)", store.ErrNotFound)
		}
		var grant string
		if err := q.queryRow(ctx, `SELECT bmc_networks FROM rack_secrets WHERE hash = ?`, hashSecret(secret)).Scan(&grant); err != nil {
			return err
		}
		err = q.queryRow(ctx, `SELECT system_id FROM racks WHERE hostname = ? AND enrolled = ? AND seen < ? ORDER BY seen LIMIT 1`,
			r.Hostname, true, s.tv(now.Add(-store.RackAlive))).Scan(&c.RackID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if c.RackID, err = newRackID(ctx, q); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if _, err := q.exec(ctx, `DELETE FROM rack_credentials WHERE rack_id = ?`, c.RackID); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `UPDATE rack_secrets SET rack_id = ? WHERE hash = ?`, c.RackID, hashSecret(secret)); err != nil {
			return err
		}
		// A rack taking an earlier one's place keeps its grant unless the
		// secret carries one, as it keeps its VLAN roles.
		_, err = q.exec(ctx, `INSERT INTO racks (system_id, hostname, address, version, seen, enrolled, bmc_networks) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (system_id) DO UPDATE SET address = excluded.address, version = excluded.version, seen = excluded.seen,
			bmc_networks = CASE WHEN excluded.bmc_networks = '' THEN racks.bmc_networks ELSE excluded.bmc_networks END`,
			c.RackID, r.Hostname, r.Address, r.Version, s.tv(now), true, grant)
		if err != nil {
			return err
		}
		_, err = q.exec(ctx, `INSERT INTO rack_credentials (token_key, consumer_key, secret_hash, rack_id, created) VALUES (?, ?, ?, ?, ?)`,
			c.TokenKey, c.ConsumerKey, c.SecretHash, c.RackID, s.tv(now))
		return err
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.RackCredential{}, err
		}
		return store.RackCredential{}, fmt.Errorf("enrol rack %q: %w", r.Hostname, err)
	}
	return c, nil
}

// newRackID picks a system id no rack and no machine has.
func newRackID(ctx context.Context, q conn) (string, error) {
	for range 20 {
		id, err := newSystemID(ctx, q)
		if err != nil {
			return "", err
		}
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM racks WHERE system_id = ?`, id).Scan(&n); err != nil {
			return "", err
		}
		if n == 0 {
			return id, nil
		}
	}
	return "", errors.New("no free rack system id")
}

// RackCredentialByToken finds an enrolled rack's credential.
func (s *Store) RackCredentialByToken(ctx context.Context, tokenKey string) (store.RackCredential, error) {
	c := store.RackCredential{TokenKey: tokenKey}
	err := s.conn(s.read).queryRow(ctx, `SELECT c.consumer_key, c.secret_hash, c.rack_id, r.hostname
		FROM rack_credentials c JOIN racks r ON r.system_id = c.rack_id WHERE c.token_key = ?`, tokenKey).
		Scan(&c.ConsumerKey, &c.SecretHash, &c.RackID, &c.Hostname)
	if errors.Is(err, sql.ErrNoRows) {
		return store.RackCredential{}, fmt.Errorf("rack credential %w", store.ErrNotFound)
	}
	if err != nil {
		return store.RackCredential{}, fmt.Errorf("look up rack credential: %w", err)
	}
	return c, nil
}

// ReportRack records the rack's status report as seen now (for an
// enrolled rack, only while it is still recorded, as TouchRack).
func (s *Store) ReportRack(ctx context.Context, r store.Rack) error {
	now := s.tv(s.now())
	// A report without DNS addresses (r.DNS nil) keeps those the rack
	// gave when it connected.
	dns, keep := strings.Join(r.DNS, ","), r.DNS == nil
	if r.Enrolled {
		return s.updateEnrolled(ctx, r, `hostname = ?, address = ?, version = ?, seen = ?, report = ?, reported = ?,
			dns_addresses = CASE WHEN ? THEN dns_addresses ELSE ? END`,
			r.Hostname, r.Address, r.Version, now, r.Report, now, keep, dns)
	}
	_, err := s.conn(s.write).exec(ctx, `INSERT INTO racks (system_id, hostname, address, version, seen, report, reported, dns_addresses) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (system_id) DO UPDATE SET hostname = excluded.hostname, address = excluded.address, version = excluded.version,
		seen = excluded.seen, report = excluded.report, reported = excluded.reported,
		dns_addresses = CASE WHEN ? THEN racks.dns_addresses ELSE excluded.dns_addresses END`,
		r.SystemID, r.Hostname, r.Address, r.Version, now, r.Report, now, dns, keep)
	if err != nil {
		return fmt.Errorf("record report of rack %s: %w", r.SystemID, err)
	}
	return nil
}

// GrantRack sets what an administrator trusts an enrolled rack with.
func (s *Store) GrantRack(ctx context.Context, systemID string, g store.RackGrant) error {
	set, args := []string{}, []any{}
	if g.BMCNetworks != nil {
		set, args = append(set, "bmc_networks = ?"), append(args, strings.Join(g.BMCNetworks, ","))
	}
	if g.Subnets != nil {
		set, args = append(set, "served_subnets = ?"), append(args, strings.Join(g.Subnets, ","))
	}
	if len(set) == 0 {
		set = append(set, "system_id = system_id") // still says whether the rack exists
	}
	return s.updateEnrolled(ctx, store.Rack{SystemID: systemID}, strings.Join(set, ", "), args...)
}

// DeleteRack forgets a rack, its credentials and its power record.
func (s *Store) DeleteRack(ctx context.Context, systemID string) error {
	return s.inTx(ctx, func(q conn) error {
		res, err := q.exec(ctx, `DELETE FROM racks WHERE system_id = ?`, systemID)
		if err != nil {
			return fmt.Errorf("delete rack %s: %w", systemID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("rack", systemID)
		}
		for _, q1 := range []string{`DELETE FROM rack_credentials WHERE rack_id = ?`, `DELETE FROM rack_power WHERE rack_id = ?`} {
			if _, err := q.exec(ctx, q1, systemID); err != nil {
				return fmt.Errorf("delete rack %s: %w", systemID, err)
			}
		}
		return nil
	})
}
