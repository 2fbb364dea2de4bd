package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

// CreateNamedToken issues a new API key for an existing user (else
// store.ErrNotFound). The keys and secret are random alphanumerics; the
// secret is stored sealed, not hashed, because OAuth's PLAINTEXT signature
// is checked by comparing it, which the API layer does.
func (s *Store) CreateNamedToken(ctx context.Context, username, name string) (store.Token, error) {
	t := store.Token{
		ConsumerKey: randomString(consumerKeyLen, alphanumerics),
		TokenKey:    randomString(tokenKeyLen, alphanumerics),
		Secret:      randomString(tokenSecretLen, alphanumerics),
		Username:    username,
		Created:     s.now(),
		Name:        name,
	}
	sealed, err := s.sealer.Seal([]byte(t.Secret))
	if err != nil {
		return store.Token{}, fmt.Errorf("create token for %q: %w", username, err)
	}
	err = s.inTx(ctx, func(q conn) error {
		u, err := getUser(ctx, q, username)
		if err != nil {
			return err
		}
		_, err = q.exec(ctx, `INSERT INTO tokens (token_key, consumer_key, secret, user_id, created, name) VALUES (?, ?, ?, ?, ?, ?)`,
			t.TokenKey, t.ConsumerKey, sealed, u.ID, s.tv(t.Created), t.Name)
		return err
	})
	if err != nil {
		return store.Token{}, fmt.Errorf("create token for %q: %w", username, err)
	}
	return t, nil
}

// ListTokens returns a user's API keys, oldest first, secrets unsealed.
func (s *Store) ListTokens(ctx context.Context, username string) ([]store.Token, error) {
	var out []store.Token
	err := eachRow(ctx, s.conn(s.read), `SELECT t.consumer_key, t.token_key, t.secret, t.created, t.name
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE u.name = ? ORDER BY t.created, t.token_key`,
		[]any{username}, func(r *sql.Rows) error {
			t := store.Token{Username: username}
			var sealed []byte
			if err := r.Scan(&t.ConsumerKey, &t.TokenKey, &sealed, timeDest{&t.Created}, &t.Name); err != nil {
				return err
			}
			secret, err := s.sealer.Open(sealed)
			if err != nil {
				return fmt.Errorf("secret: %w", err)
			}
			t.Secret = string(secret)
			out = append(out, t)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list tokens of %q: %w", username, err)
	}
	return out, nil
}

// DeleteToken removes one of the user's API keys; every request signed
// with it is refused from then on, since each looks its token up.
func (s *Store) DeleteToken(ctx context.Context, username, tokenKey string) error {
	return s.changeToken(ctx, username, `DELETE FROM tokens WHERE token_key = ? AND user_id = (SELECT id FROM users WHERE name = ?)`,
		tokenKey, username)
}

// RenameToken sets the name of one of the user's API keys.
func (s *Store) RenameToken(ctx context.Context, username, tokenKey, name string) error {
	return s.changeToken(ctx, username, `UPDATE tokens SET name = ? WHERE token_key = ? AND user_id = (SELECT id FROM users WHERE name = ?)`,
		name, tokenKey, username)
}

// changeToken runs a statement on one token of the user's; none changed
// is store.ErrNotFound. The key stays out of the message: it is half a
// credential.
func (s *Store) changeToken(ctx context.Context, username, query string, args ...any) error {
	res, err := s.conn(s.write).exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("token of %q: %w", username, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("token of %q: %w", username, err)
	} else if n == 0 {
		return fmt.Errorf("token of %q %w", username, store.ErrNotFound)
	}
	return nil
}
