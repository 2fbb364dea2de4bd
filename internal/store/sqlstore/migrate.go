package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// Migrate brings the schema up to date with goose, from a directory of
// migrations (fsys holds the .sql files at its root) and goMigrations.
// The options carry the dialect's locking, which makes it safe for two
// processes to migrate the same database at once: the second waits, then
// finds nothing to do.
func Migrate(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, opts ...goose.ProviderOption) error {
	opts = append([]goose.ProviderOption{goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(goMigrations(dialect == goose.DialectPostgres)...)}, opts...)
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
