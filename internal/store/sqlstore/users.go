package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/anvilmetal/anvil/internal/store"
)

// Token part lengths, as MAAS issues them.
const (
	consumerKeyLen = 18
	tokenKeyLen    = 18
	tokenSecretLen = 32
)

const userCols = `id, name, email, admin`

func scanUser(r interface{ Scan(...any) error }) (store.User, error) {
	var u store.User
	err := r.Scan(&u.ID, &u.Name, &u.Email, &u.Admin)
	return u, err
}

// EnsureUser creates the user if missing and returns it. An existing user is
// returned unchanged: in particular admin=true does not make an existing
// non-admin an admin, so that a typo on the command line cannot silently
// escalate someone.
func (s *Store) EnsureUser(ctx context.Context, name string, admin bool) (store.User, error) {
	if name == "" {
		return store.User{}, errors.New("ensure user: a name is required")
	}
	c := s.conn(s.write)
	_, err := c.exec(ctx, `INSERT INTO users (name, admin, created) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, admin, s.tv(s.now()))
	if err != nil {
		return store.User{}, fmt.Errorf("ensure user %q: %w", name, err)
	}
	return getUser(ctx, c, name)
}

func (s *Store) CreateUser(ctx context.Context, u store.User, passwordHash string) (store.User, error) {
	if u.Name == "" {
		return store.User{}, errors.New("create user: a name is required")
	}
	c := s.conn(s.write)
	res, err := c.exec(ctx, `INSERT INTO users (name, email, admin, password_hash, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		u.Name, u.Email, u.Admin, passwordHash, s.tv(s.now()))
	if err != nil {
		return store.User{}, fmt.Errorf("create user %q: %w", u.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.User{}, &store.ConflictError{What: "username " + u.Name}
	}
	return getUser(ctx, c, u.Name)
}

// GetUser returns a user, or an error wrapping store.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, name string) (store.User, error) {
	return getUser(ctx, s.conn(s.read), name)
}

func getUser(ctx context.Context, q conn, name string) (store.User, error) {
	u, err := scanUser(q.queryRow(ctx, `SELECT `+userCols+` FROM users WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return u, notFound("user", name)
	}
	if err != nil {
		return u, fmt.Errorf("get user %q: %w", name, err)
	}
	return u, nil
}

// ListUsers returns every user by name.
func (s *Store) ListUsers(ctx context.Context) ([]store.User, error) {
	var out []store.User
	err := eachRow(ctx, s.conn(s.read), `SELECT `+userCols+` FROM users ORDER BY name`, nil, func(r *sql.Rows) error {
		u, err := scanUser(r)
		out = append(out, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// CreateToken issues a new API key for an existing user (else
// store.ErrNotFound) under MAAS's default name; see CreateNamedToken.
func (s *Store) CreateToken(ctx context.Context, username string) (store.Token, error) {
	return s.CreateNamedToken(ctx, username, store.DefaultTokenName)
}

// LookupToken finds a token by its consumer and token keys and returns it,
// secret unsealed, with its user; unknown keys are store.ErrNotFound.
func (s *Store) LookupToken(ctx context.Context, consumerKey, tokenKey string) (store.Token, store.User, error) {
	var (
		t      = store.Token{ConsumerKey: consumerKey, TokenKey: tokenKey}
		u      store.User
		sealed []byte
	)
	err := s.conn(s.read).queryRow(ctx, `SELECT t.secret, t.created, t.name, u.id, u.name, u.email, u.admin
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_key = ? AND t.consumer_key = ?`,
		tokenKey, consumerKey).Scan(&sealed, timeDest{&t.Created}, &t.Name, &u.ID, &u.Name, &u.Email, &u.Admin)
	if errors.Is(err, sql.ErrNoRows) {
		// The keys are credentials of a sort: keep them out of the message.
		return store.Token{}, store.User{}, fmt.Errorf("token %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Token{}, store.User{}, fmt.Errorf("look up token: %w", err)
	}
	secret, err := s.sealer.Open(sealed)
	if err != nil {
		return store.Token{}, store.User{}, fmt.Errorf("look up token: secret: %w", err)
	}
	t.Secret, t.Username = string(secret), u.Name
	return t, u, nil
}

// DeleteUser removes a user with its tokens, sessions and SSH keys. A
// user who still owns machines, and the last administrator, cannot be
// deleted (errors wrapping store.ErrInUse, worded as MAAS words them).
// The administrators' rows are locked first, so that two administrators
// deleting each other at once cannot leave none.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	return s.inTx(ctx, func(q conn) error {
		var admins []string
		err := eachRow(ctx, q, `SELECT name FROM users WHERE admin = ?`+s.d.ForUpdateRow, []any{true}, func(r *sql.Rows) error {
			var n string
			admins = append(admins, n)
			return r.Scan(&admins[len(admins)-1])
		})
		if err != nil {
			return fmt.Errorf("delete user %q: %w", name, err)
		}
		u, err := getUser(ctx, q, name)
		if err != nil {
			return err
		}
		var owned int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM machines WHERE owner = ?`, name).Scan(&owned); err != nil {
			return fmt.Errorf("delete user %q: %w", name, err)
		}
		if owned > 0 {
			return fmt.Errorf("User %s cannot be deleted: %d node(s) are still allocated: %w", name, owned, store.ErrInUse)
		}
		if u.Admin && len(admins) <= 1 {
			return fmt.Errorf("User %s cannot be deleted: it is the last administrator: %w", name, store.ErrInUse)
		}
		if _, err := q.exec(ctx, `DELETE FROM users WHERE id = ?`, u.ID); err != nil {
			return fmt.Errorf("delete user %q: %w", name, err)
		}
		return nil
	})
}
