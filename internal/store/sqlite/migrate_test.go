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
	path := filepath.Join(t.TempDir(), "anvil.db")
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, mustSub(migrations, "migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), 19); err != nil {
		t.Fatal(err)
	}
	for _, q := range storetest.NetworkMigrationSeed("0", "1") {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	storetest.CheckNetworkMigration(t, openAt(t, path))
}

// TestDeviceMigration: a database at migration 00024 keeps its machines
// as machines through 00025.
func TestDeviceMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anvil.db")
	db, err := sql.Open("sqlite", path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, mustSub(migrations, "migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), 24); err != nil {
		t.Fatal(err)
	}
	for _, q := range storetest.DeviceMigrationSeed("0", "1") {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Up and down again: the down migration leaves the machine alone.
	if _, err := p.UpTo(t.Context(), 25); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(t.Context(), 24); err != nil {
		t.Fatal(err)
	}
	db.Close()

	storetest.CheckDeviceMigration(t, openAt(t, path))
}
