// Package postgres opens Anvil's store in PostgreSQL, for installations
// whose regions share one database.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Advisory lock keys, spelled in ASCII so that they are recognisable in
// pg_locks: "anvilmig" and "anvilevt".
const (
	migrationLockKey int64 = 0x616e76696c6d6967
	eventsLockKey    int64 = 0x616e76696c657674
	powerLockKey     int64 = 0x616e76696c707772 // "anvilpwr"
)

// maxConns caps the pool; the store's transactions are short.
const maxConns = 20

// dialect describes PostgreSQL to sqlstore.
var dialect = sqlstore.Dialect{
	NumberedPlaceholders: true,
	// timestamptz keeps microseconds.
	TimeResolution: time.Microsecond,
	EncodeTime:     func(t time.Time) any { return t },
	// OF m: lock the machine row only, not the zone and pool it joins.
	ForUpdate:    " FOR UPDATE OF m",
	ForUpdateRow: " FOR UPDATE",
	ForShareRow:  " FOR SHARE",
	LockEvents:   "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(eventsLockKey, 10) + ")",
	LockPower:    "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(powerLockKey, 10) + ")",
	ReadTx:       &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
	IsUniqueViolation: func(err error) bool {
		return hasCode(err, "23505")
	},
	IsForeignKeyViolation: func(err error) bool {
		return hasCode(err, "23503")
	},
}

func hasCode(err error, code string) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == code
}

// Open connects to the database at url (postgres:// or postgresql://, any
// parameter pgx accepts) and migrates it.
func Open(ctx context.Context, url string, sealer *secret.Sealer) (store.Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message can quote the URL, password included.
		return nil, errors.New("postgres: the database URL is not valid")
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns / 2)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect to %s/%s: %w", cfg.Host, cfg.Database, err)
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := sqlstore.Migrate(ctx, db, goose.DialectPostgres, sub, goose.WithSessionLocker(advisoryLock{})); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := sqlstore.New(ctx, sqlstore.Config{Dialect: dialect, Write: db, Read: db, Sealer: sealer})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// advisoryLock holds a session-level advisory lock around migrations, so
// that regions starting together migrate one at a time. Unlike goose's own
// locker, which polls with pg_try_advisory_lock every few seconds, it
// blocks in pg_advisory_lock and so proceeds as soon as the lock is free.
// PostgreSQL releases it if the session dies.
type advisoryLock struct{}

func (advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	return nil
}

func (advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, migrationLockKey); err != nil {
		return fmt.Errorf("release migration lock: %w", err)
	}
	return nil
}
