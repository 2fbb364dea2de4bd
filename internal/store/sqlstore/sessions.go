package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// Session IDs and CSRF tokens: 32 characters of 62 symbols, about 190 bits.
const sessionIDLen = 32

// SetPassword stores a user's password hash.
func (s *Store) SetPassword(ctx context.Context, username, hash string) error {
	res, err := s.conn(s.write).exec(ctx, `UPDATE users SET password_hash = ? WHERE name = ?`, hash, username)
	if err != nil {
		return fmt.Errorf("set password of %q: %w", username, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("user", username)
	}
	// A new password ends the sessions the old one opened.
	if _, err := s.conn(s.write).exec(ctx, `DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)`, username); err != nil {
		return fmt.Errorf("end sessions of %q: %w", username, err)
	}
	return nil
}

// PasswordHash returns the user and its password hash.
func (s *Store) PasswordHash(ctx context.Context, username string) (store.User, string, error) {
	var (
		u    store.User
		hash string
	)
	err := s.conn(s.read).queryRow(ctx, `SELECT `+userCols+`, password_hash FROM users WHERE name = ?`, username).
		Scan(&u.ID, &u.Name, &u.Email, &u.Admin, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return u, "", notFound("user", username)
	}
	if err != nil {
		return u, "", fmt.Errorf("password of %q: %w", username, err)
	}
	return u, hash, nil
}

// CreateSession starts a session; only the hash of its ID is stored, so a
// copy of the database does not log anyone in.
func (s *Store) CreateSession(ctx context.Context, username string, ttl time.Duration) (store.Session, error) {
	now := s.now()
	se := store.Session{
		ID:       randomString(sessionIDLen, alphanumerics),
		Username: username,
		CSRF:     randomString(sessionIDLen, alphanumerics),
		Created:  now,
		Expires:  now.Add(ttl),
	}
	err := s.inTx(ctx, func(q conn) error {
		u, err := getUser(ctx, q, username)
		if err != nil {
			return err
		}
		_, err = q.exec(ctx, `INSERT INTO sessions (id_hash, user_id, csrf, created, expires) VALUES (?, ?, ?, ?, ?)`,
			secretHash(se.ID), u.ID, se.CSRF, s.tv(se.Created), s.tv(se.Expires))
		return err
	})
	if err != nil {
		return store.Session{}, fmt.Errorf("create session for %q: %w", username, err)
	}
	return se, nil
}

// LookupSession finds a live session by its ID.
func (s *Store) LookupSession(ctx context.Context, id string) (store.Session, store.User, error) {
	var (
		se store.Session
		u  store.User
	)
	err := s.conn(s.read).queryRow(ctx, `SELECT u.id, u.name, u.email, u.admin, se.csrf, se.created, se.expires
		FROM sessions se JOIN users u ON u.id = se.user_id WHERE se.id_hash = ? AND se.expires > ?`,
		secretHash(id), s.tv(s.now())).Scan(&u.ID, &u.Name, &u.Email, &u.Admin, &se.CSRF, timeDest{&se.Created}, timeDest{&se.Expires})
	if errors.Is(err, sql.ErrNoRows) {
		return se, u, notFound("session", "")
	}
	if err != nil {
		return se, u, fmt.Errorf("look up session: %w", err)
	}
	se.Username = u.Name
	return se, u, nil
}

// DeleteSession ends a session and sweeps expired ones.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.conn(s.write).exec(ctx, `DELETE FROM sessions WHERE id_hash = ? OR expires <= ?`, secretHash(id), s.tv(s.now()))
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
