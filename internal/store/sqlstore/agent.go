package sqlstore

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func secretHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// CreateMachineToken issues the machine's metadata token for status st and
// revokes any it had before, in one transaction.
func (s *Store) CreateMachineToken(ctx context.Context, systemID string, st machine.Status) (store.Token, error) {
	t := store.Token{
		ConsumerKey: randomString(consumerKeyLen, alphanumerics),
		TokenKey:    randomString(tokenKeyLen, alphanumerics),
		Secret:      randomString(tokenSecretLen, alphanumerics),
		Created:     s.now(),
	}
	err := s.inTx(ctx, func(q conn) error {
		if _, err := q.exec(ctx, `DELETE FROM machine_tokens WHERE system_id = ?`, systemID); err != nil {
			return err
		}
		_, err := q.exec(ctx, `INSERT INTO machine_tokens (token_key, consumer_key, secret_hash, system_id, status, created) VALUES (?, ?, ?, ?, ?, ?)`,
			t.TokenKey, t.ConsumerKey, secretHash(t.Secret), systemID, int(st), s.tv(t.Created))
		return err
	})
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return store.Token{}, notFound("machine", systemID)
		}
		return store.Token{}, fmt.Errorf("create token for machine %s: %w", systemID, err)
	}
	return t, nil
}

// LookupMachineToken checks a machine token and returns the machine and the
// status it was issued for; a wrong key or secret is store.ErrNotFound.
func (s *Store) LookupMachineToken(ctx context.Context, consumerKey, tokenKey, secret string) (string, machine.Status, error) {
	var (
		systemID, hash, consumer string
		st                       int
	)
	err := s.conn(s.read).queryRow(ctx, `SELECT system_id, status, secret_hash, consumer_key FROM machine_tokens WHERE token_key = ?`, tokenKey).
		Scan(&systemID, &st, &hash, &consumer)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, fmt.Errorf("machine token: %w", store.ErrNotFound)
	}
	if err != nil {
		return "", 0, fmt.Errorf("machine token: %w", err)
	}
	okConsumer := subtle.ConstantTimeCompare([]byte(consumer), []byte(consumerKey)) == 1
	okSecret := subtle.ConstantTimeCompare([]byte(hash), []byte(secretHash(secret))) == 1
	if !okConsumer || !okSecret {
		return "", 0, fmt.Errorf("machine token: %w", store.ErrNotFound)
	}
	return systemID, machine.Status(st), nil
}

func (s *Store) MachineToken(ctx context.Context, systemID string) (store.Token, machine.Status, error) {
	var (
		t  store.Token
		st int
	)
	err := s.conn(s.read).queryRow(ctx, `SELECT token_key, consumer_key, status, created FROM machine_tokens WHERE system_id = ? ORDER BY created DESC LIMIT 1`, systemID).
		Scan(&t.TokenKey, &t.ConsumerKey, &st, timeDest{&t.Created})
	if errors.Is(err, sql.ErrNoRows) {
		return t, 0, notFound("token of machine", systemID)
	}
	if err != nil {
		return t, 0, fmt.Errorf("token of machine %s: %w", systemID, err)
	}
	return t, machine.Status(st), nil
}

// DeleteMachineTokens revokes every token of the machine.
func (s *Store) DeleteMachineTokens(ctx context.Context, systemID string) error {
	_, err := s.conn(s.write).exec(ctx, `DELETE FROM machine_tokens WHERE system_id = ?`, systemID)
	if err != nil {
		return fmt.Errorf("revoke tokens of machine %s: %w", systemID, err)
	}
	return nil
}

// PutResults stores result files, replacing those of the same name, all or
// none.
func (s *Store) PutResults(ctx context.Context, systemID string, files map[string][]byte) error {
	err := s.inTx(ctx, func(q conn) error { return s.putResults(ctx, q, systemID, files) })
	if err != nil {
		if s.d.IsForeignKeyViolation(err) {
			return notFound("machine", systemID)
		}
		return fmt.Errorf("store results of machine %s: %w", systemID, err)
	}
	return nil
}

// putResults replaces the machine's result files of the same names.
func (s *Store) putResults(ctx context.Context, q conn, systemID string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	now := s.tv(s.now())
	for _, n := range names {
		if _, err := q.exec(ctx, `DELETE FROM machine_results WHERE system_id = ? AND name = ?`, systemID, n); err != nil {
			return err
		}
		if _, err := q.exec(ctx, `INSERT INTO machine_results (system_id, name, data, created) VALUES (?, ?, ?, ?)`,
			systemID, n, append([]byte{}, files[n]...), now); err != nil {
			return err
		}
	}
	return nil
}

// ListResults returns the machine's result files by name.
func (s *Store) ListResults(ctx context.Context, systemID string) ([]store.Result, error) {
	var out []store.Result
	err := eachRow(ctx, s.conn(s.read), `SELECT name, data, created FROM machine_results WHERE system_id = ? ORDER BY name`,
		[]any{systemID}, func(r *sql.Rows) error {
			var res store.Result
			if err := r.Scan(&res.Name, &res.Data, timeDest{&res.Created}); err != nil {
				return err
			}
			out = append(out, res)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("results of machine %s: %w", systemID, err)
	}
	return out, nil
}
