// Package open picks and opens a store from a database URL. It lives apart
// from package store because it imports the implementations, which import
// store.
package open

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/postgres"
	"github.com/anvilmetal/anvil/internal/store/sqlite"
)

// DefaultSQLiteFile is the database file in the data directory when the URL
// names none.
const DefaultSQLiteFile = "anvil.db"

// Open opens (and migrates) the store dbURL names:
//
//   - "" or "sqlite://" or "sqlite:": SQLite at <dataDir>/anvil.db, creating
//     dataDir with mode 0700;
//   - "sqlite://<path>" or "sqlite:<path>": SQLite at that path (a relative
//     path is relative to the working directory; "sqlite:///var/x.db" and
//     "sqlite:/var/x.db" are both absolute);
//   - "postgres://..." or "postgresql://...": PostgreSQL.
//
// Secrets at rest are sealed with sealer.
func Open(ctx context.Context, dbURL, dataDir string, sealer *secret.Sealer) (store.Store, error) {
	if sealer == nil {
		return nil, errors.New("open store: a secret sealer is required")
	}
	switch {
	case strings.HasPrefix(dbURL, "postgres://"), strings.HasPrefix(dbURL, "postgresql://"):
		return postgres.Open(ctx, dbURL, sealer)
	case dbURL == "", strings.HasPrefix(dbURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dbURL, "sqlite:"), "//")
		if path == "" {
			if dataDir == "" {
				return nil, errors.New("open store: no data directory for the SQLite database")
			}
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return nil, fmt.Errorf("open store: create data directory: %w", err)
			}
			path = filepath.Join(dataDir, DefaultSQLiteFile)
		}
		return sqlite.Open(ctx, path, sealer)
	}
	scheme, _, _ := strings.Cut(dbURL, ":")
	return nil, fmt.Errorf("open store: unsupported database URL scheme %q (use sqlite: or postgres://)", scheme)
}
