package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

// AddSSHKey stores a public key for a user; the same key twice is a
// *store.ConflictError.
func (s *Store) AddSSHKey(ctx context.Context, username, key string) (store.SSHKey, error) {
	k := store.SSHKey{Username: username, Key: key, Created: s.now()}
	err := s.inTx(ctx, func(q conn) error {
		u, err := getUser(ctx, q, username)
		if err != nil {
			return err
		}
		return q.queryRow(ctx, `INSERT INTO sshkeys (user_id, key, created) VALUES (?, ?, ?) RETURNING id`,
			u.ID, key, s.tv(k.Created)).Scan(&k.ID)
	})
	if s.d.IsUniqueViolation(err) {
		return store.SSHKey{}, &store.ConflictError{What: "ssh key"}
	}
	if err != nil {
		return store.SSHKey{}, fmt.Errorf("add ssh key for %q: %w", username, err)
	}
	return k, nil
}

// ListSSHKeys returns a user's keys, oldest first.
func (s *Store) ListSSHKeys(ctx context.Context, username string) ([]store.SSHKey, error) {
	out := []store.SSHKey{}
	if err := listSSHKeys(ctx, s.conn(s.read), username, &out); err != nil {
		return nil, fmt.Errorf("ssh keys of %q: %w", username, err)
	}
	return out, nil
}

func listSSHKeys(ctx context.Context, q conn, username string, out *[]store.SSHKey) error {
	return eachRow(ctx, q, `SELECT k.id, u.name, k.key, k.created, k.keysource FROM sshkeys k JOIN users u ON u.id = k.user_id
		WHERE u.name = ? ORDER BY k.id`, []any{username}, func(r *sql.Rows) error {
		var k store.SSHKey
		if err := r.Scan(&k.ID, &k.Username, &k.Key, timeDest{&k.Created}, &k.KeySource); err != nil {
			return err
		}
		*out = append(*out, k)
		return nil
	})
}

// ImportSSHKeys adds the keys the user lacks under keysource, in one
// transaction, and returns the user's keys from that source.
func (s *Store) ImportSSHKeys(ctx context.Context, username, keysource string, keys []string) ([]store.SSHKey, error) {
	var out []store.SSHKey
	err := s.inTx(ctx, func(q conn) error {
		u, err := getUser(ctx, q, username)
		if err != nil {
			return err
		}
		for _, key := range keys {
			_, err := q.exec(ctx, `INSERT INTO sshkeys (user_id, key, created, keysource) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, key) DO NOTHING`,
				u.ID, key, s.tv(s.now()), keysource)
			if err != nil {
				return err
			}
		}
		var all []store.SSHKey
		if err := listSSHKeys(ctx, q, username, &all); err != nil {
			return err
		}
		for _, k := range all {
			if k.KeySource == keysource {
				out = append(out, k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import ssh keys for %q from %s: %w", username, keysource, err)
	}
	return out, nil
}

// DeleteSSHKey removes a user's key; another user's key is not found.
func (s *Store) DeleteSSHKey(ctx context.Context, username string, id int64) error {
	var got int64
	err := s.conn(s.write).queryRow(ctx, `DELETE FROM sshkeys WHERE id = ? AND user_id = (SELECT id FROM users WHERE name = ?) RETURNING id`,
		id, username).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("ssh key", fmt.Sprint(id))
	}
	if err != nil {
		return fmt.Errorf("delete ssh key %d: %w", id, err)
	}
	return nil
}
