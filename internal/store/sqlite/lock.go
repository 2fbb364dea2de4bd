package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// migrationLockTimeout is how long a process waits for another to finish
// migrating.
const migrationLockTimeout = 5 * time.Minute

// migrationLock serialises migrations between processes, which goose does
// not do for SQLite. Holding a write transaction on the database itself
// would block the migrations too, so the lock is a write transaction on a
// small side file: SQLite's own file locking, which the operating system
// releases if the process dies.
type migrationLock struct {
	path string
	db   *sql.DB
	tx   *sql.Tx
}

// Lock takes the lock (the *sql.DB is unused; the signature is goose's
// lock.Locker).
func (l *migrationLock) Lock(ctx context.Context, _ *sql.DB) error {
	params := url.Values{
		"_busy_timeout": {strconv.Itoa(int(migrationLockTimeout / time.Millisecond))},
		"_txlock":       {"immediate"},
	}
	db, err := sql.Open("sqlite", l.path+"?"+params.Encode())
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return fmt.Errorf("migration lock %s: %w", l.path, err)
	}
	l.db, l.tx = db, tx
	return nil
}

// Unlock releases it.
func (l *migrationLock) Unlock(context.Context, *sql.DB) error {
	if l.db == nil {
		return nil
	}
	l.tx.Rollback()
	err := l.db.Close()
	l.db, l.tx = nil, nil
	return err
}
