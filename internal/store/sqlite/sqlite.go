// Package sqlite opens Anvil's store in an embedded SQLite database (the
// pure-Go modernc.org/sqlite, no cgo), the default for a single region.
//
// The database runs in WAL mode so that reads never wait for writes. Writes
// go through one connection whose transactions begin IMMEDIATE: writers in
// this process queue for that connection, and a writer in another process
// (such as `anvil apikey` while the server runs) waits for SQLite's write
// lock for up to busyTimeout instead of failing with SQLITE_BUSY. Reads use a
// separate pool of read-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// busyTimeout is how long a statement waits for another process's lock.
const busyTimeout = 10 * time.Second

// dialect describes SQLite to sqlstore. Times are stored as INTEGER Unix
// nanoseconds.
var dialect = sqlstore.Dialect{
	TimeResolution: time.Nanosecond,
	EncodeTime:     func(t time.Time) any { return t.UnixNano() },
	ReadTx:         &sql.TxOptions{ReadOnly: true},
	IsUniqueViolation: func(err error) bool {
		return hasCode(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	IsForeignKeyViolation: func(err error) bool { return hasCode(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY) },
}

func hasCode(err error, codes ...int) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, c := range codes {
		if e.Code() == c {
			return true
		}
	}
	return false
}

// Open opens the database file at path, creating it (mode 0600, and its
// directory 0700) if needed, and migrates it.
func Open(ctx context.Context, path string, sealer *secret.Sealer) (store.Store, error) {
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: %q is not a usable database file path", path)
	}
	if err := prepareFile(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// The lock covers the switch to WAL as well as the migrations: two
	// connections switching a new file at once deadlock in SQLite's
	// rollback-journal locking, and one gets SQLITE_BUSY at once, without
	// waiting out the busy timeout.
	lock := &migrationLock{path: path + ".migrate-lock"}
	if err := lock.Lock(ctx, nil); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	write, err := openPool(path, 1, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_txlock":       {"immediate"},
	})
	if err != nil {
		lock.Unlock(ctx, nil)
		return nil, err
	}
	err = sqlstore.Migrate(ctx, write, goose.DialectSQLite3, mustSub(migrations, "migrations"))
	lock.Unlock(ctx, nil)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	read, err := openPool(path, max(4, runtime.GOMAXPROCS(0)), url.Values{"_query_only": {"1"}})
	if err != nil {
		write.Close()
		return nil, err
	}
	s, err := sqlstore.New(ctx, sqlstore.Config{Dialect: dialect, Write: write, Read: read, Sealer: sealer})
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	return s, nil
}

// openPool opens a pool of at most n connections; every connection waits
// busyTimeout for locks and enforces foreign keys (which SQLite, for
// compatibility, does not by default).
func openPool(path string, n int, params url.Values) (*sql.DB, error) {
	params.Set("_busy_timeout", strconv.Itoa(int(busyTimeout/time.Millisecond)))
	params.Set("_foreign_keys", "1")
	db, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	return db, nil
}

// prepareFile creates the directory and an empty database file readable
// only by its owner; SQLite gives its -wal and -shm files the same mode.
func prepareFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	return f.Close()
}

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
