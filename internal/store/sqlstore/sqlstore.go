// Package sqlstore implements store.Store once, over database/sql, for every
// SQL database Anvil supports. The sqlite and postgres packages open the
// database, migrate it and describe their differences in a Dialect; all
// queries, transactions and rules live here, so the two cannot drift apart.
//
// Queries are written with "?" placeholders and rewritten for databases that
// number them. Every value a caller supplies travels as a parameter: SQL text
// is only ever assembled from constants.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// NumberedPlaceholders rewrites "?" as $1, $2, ...
	NumberedPlaceholders bool
	// TimeResolution is the finest time step the database keeps. Times are
	// truncated to it before writing, so that what a caller gets back from
	// CreateMachine equals what a later read returns.
	TimeResolution time.Duration
	// EncodeTime converts a UTC time to the value stored (Unix nanoseconds
	// for SQLite, the time itself for PostgreSQL). Scanning accepts both.
	EncodeTime func(time.Time) any
	// ForUpdate is appended to the query that loads a machine for
	// UpdateMachine, to lock its row. SQLite leaves it empty: its write
	// transactions begin IMMEDIATE and so already exclude other writers.
	ForUpdate string
	// ForUpdateRow locks the one row a plain single-table query reads.
	ForUpdateRow string
	// ForShareRow locks it against ForUpdateRow but not against itself.
	ForShareRow string
	// LockEvents, if set, runs in a transaction just before it inserts
	// events. PostgreSQL takes a transaction-level advisory lock there so
	// that event IDs become visible in increasing order: without it, a
	// reader polling with AfterID could see ID 7 commit before ID 6 and
	// skip 6 forever. It is taken after every row lock, so it cannot
	// deadlock with them.
	LockEvents string
	// LockPower, if set, runs first in every transaction that changes the
	// power queue. PostgreSQL takes an advisory lock so that claims by
	// several regions are serialised: each claim's "nothing running on
	// this BMC" check must see the claims before it.
	LockPower string
	// ReadTx are the options for reads that take several queries, which
	// must see one snapshot.
	ReadTx *sql.TxOptions
	// IsUniqueViolation and IsForeignKeyViolation classify driver errors.
	IsUniqueViolation     func(error) bool
	IsForeignKeyViolation func(error) bool
}

// Config is what New needs.
type Config struct {
	Dialect Dialect
	// Write runs every transaction that changes data; Read runs the rest.
	// They may be the same pool. SQLite uses a one-connection pool for
	// writes, which serialises writers in this process without ever
	// returning SQLITE_BUSY, and a wider read-only pool for reads.
	Write, Read *sql.DB
	Sealer      *secret.Sealer
}

// Store is store.Store over a SQL database. See the store package for the
// contract; the doc comments here add what the interface leaves open.
type Store struct {
	d      Dialect
	write  *sql.DB
	read   *sql.DB
	sealer *secret.Sealer
}

var _ store.Store = (*Store)(nil)

// New returns a Store over an already migrated database. It checks that the
// sealer's key is the one the database was first used with, so that a wrong
// key fails at startup rather than on the first machine read.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Sealer == nil {
		return nil, errors.New("sqlstore: a secret sealer is required")
	}
	if cfg.Write == nil || cfg.Read == nil {
		return nil, errors.New("sqlstore: both database pools are required")
	}
	s := &Store{d: cfg.Dialect, write: cfg.Write, read: cfg.Read, sealer: cfg.Sealer}
	if err := s.checkKey(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes both pools.
func (s *Store) Close() error {
	err := s.write.Close()
	if s.read != s.write {
		err = errors.Join(err, s.read.Close())
	}
	return err
}

// keyCheck names the settings row that holds a value sealed with the key the
// database was first opened with.
const keyCheck = "key_check"

func (s *Store) checkKey(ctx context.Context) error {
	sealed, err := s.sealer.Seal([]byte("anvil"))
	if err != nil {
		return err
	}
	c := s.conn(s.write)
	// Two processes starting at once both insert; the first one wins and
	// both then check against it.
	if _, err := c.exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, keyCheck, sealed); err != nil {
		return fmt.Errorf("store key check: %w", err)
	}
	var stored []byte
	if err := c.queryRow(ctx, `SELECT value FROM settings WHERE name = ?`, keyCheck).Scan(&stored); err != nil {
		return fmt.Errorf("store key check: %w", err)
	}
	if _, err := s.sealer.Open(stored); err != nil {
		return fmt.Errorf("the secret key is not the one this database's secrets were sealed with "+
			"(check %s or the data directory's %s): %w", secret.EnvKey, secret.KeyFile, err)
	}
	return nil
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs "?"-placeholder SQL on a pool or a transaction.
type conn struct {
	q        querier
	numbered bool
}

func (s *Store) conn(q querier) conn { return conn{q: q, numbered: s.d.NumberedPlaceholders} }

func (c conn) sql(query string) string {
	if c.numbered {
		return numberPlaceholders(query)
	}
	return query
}

func (c conn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.q.ExecContext(ctx, c.sql(query), args...)
}

func (c conn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.q.QueryContext(ctx, c.sql(query), args...)
}

func (c conn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return c.q.QueryRowContext(ctx, c.sql(query), args...)
}

// numberPlaceholders rewrites each "?" outside a quoted literal as $n.
func numberPlaceholders(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case ch == '\'':
			quoted = !quoted
		case ch == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// inTx runs fn in a write transaction, committing if it returns nil. Its
// error is returned unchanged, so callers can test it with errors.As.
func (s *Store) inTx(ctx context.Context, fn func(c conn) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	// Rolling back after a commit does nothing; this also covers a panic.
	defer tx.Rollback()
	if err := fn(s.conn(tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// inReadTx runs fn in a read-only transaction, so that its queries see one
// snapshot of the database.
func (s *Store) inReadTx(ctx context.Context, fn func(c conn) error) error {
	tx, err := s.read.BeginTx(ctx, s.d.ReadTx)
	if err != nil {
		return fmt.Errorf("begin read transaction: %w", err)
	}
	defer tx.Rollback()
	if err := fn(s.conn(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// now is the current time as the database keeps it.
func (s *Store) now() time.Time { return s.norm(time.Now()) }

// norm converts t to UTC at the database's resolution.
func (s *Store) norm(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(s.d.TimeResolution)
}

// orNow returns norm(t), or the current time when t is zero.
func (s *Store) orNow(t time.Time) time.Time {
	if t.IsZero() {
		return s.now()
	}
	return s.norm(t)
}

// tv encodes a time for a NOT NULL column; ntv encodes zero as NULL.
func (s *Store) tv(t time.Time) any { return s.d.EncodeTime(s.norm(t)) }

func (s *Store) ntv(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return s.tv(t)
}

// timeDest scans any stored time (Unix nanoseconds, a time, or NULL for the
// zero time) into a UTC time.Time.
type timeDest struct{ t *time.Time }

func (d timeDest) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.t = time.Time{}
	case int64:
		*d.t = time.Unix(0, v).UTC()
	case time.Time:
		*d.t = v.UTC()
	default:
		return fmt.Errorf("cannot scan %T into a time", src)
	}
	return nil
}

// notFound wraps store.ErrNotFound as `what "name" not found`.
func notFound(what, name string) error {
	return fmt.Errorf("%s %q %w", what, name, store.ErrNotFound)
}
