package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/anvilmetal/anvil/internal/store/storetest"
)

// TestNetworkModelMigration: a database at migration 00019 with subnets,
// ranges and machines keeps them through 00020, on fabric-0's untagged
// VLAN, with their ids.
func TestNetworkModelMigration(t *testing.T) {
	path := migrateSeeded(t, 19, 0, storetest.NetworkMigrationSeed("0", "1"))
	storetest.CheckNetworkMigration(t, openAt(t, path))
}

// TestDeviceMigration: a database at migration 00024 keeps its machines
// as machines through 00025, up and down and up again.
func TestDeviceMigration(t *testing.T) {
	path := migrateSeeded(t, 24, 25, storetest.DeviceMigrationSeed("0", "1"))
	storetest.CheckDeviceMigration(t, openAt(t, path))
}

// TestStorageUUIDMigration: a database at migration 00036 gets a UUID
// for every storage object and the newest script sets' ids in 00037.
func TestStorageUUIDMigration(t *testing.T) {
	path := migrateSeeded(t, 36, 0, storetest.StorageUUIDMigrationSeed("0"))
	storetest.CheckStorageUUIDMigration(t, openAt(t, path))
}

// migrateSeeded makes a database at migration at, runs seed there and,
// with through set, migrates up to through and down to at again; it
// returns the database's path.
func migrateSeeded(t *testing.T, at, through int64, seed []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "anvil.db")
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, mustSub(migrations, "migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Seed(t, db, p, at, through, seed)
	return path
}
