package postgres

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/storetest"
)

// EnvURL names the variable holding the test server's URL, e.g.
// postgres://anvil:anvil@127.0.0.1:5432/anvil_test?sslmode=disable
const EnvURL = "ANVIL_TEST_POSTGRES"

func serverURL(t *testing.T) string {
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Skipf("set %s to a PostgreSQL URL (e.g. postgres://anvil:anvil@127.0.0.1:5432/anvil_test?sslmode=disable) to run these tests", EnvURL)
	}
	return u
}

// freshSchema creates a schema of its own for one test, dropped afterwards,
// and returns a URL whose connections use it. Commits skip the fsync wait,
// which only tests may do.
func freshSchema(t *testing.T) string {
	base := serverURL(t)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 6)
	rand.Read(b)
	name := "anvil_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

func testSealer(t *testing.T, b byte) *secret.Sealer {
	t.Helper()
	s, err := secret.New(bytes.Repeat([]byte{b}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openAt(t *testing.T, u string) store.Store {
	t.Helper()
	s, err := Open(t.Context(), u, testSealer(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // before the schema is dropped
	return s
}

func TestStore(t *testing.T) {
	serverURL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openAt(t, freshSchema(t)) })
}

func TestPowerParamsSealed(t *testing.T) {
	u := freshSchema(t)
	s := openAt(t, u)
	m := &machine.Machine{Hostname: "node1", PowerType: "ipmi", PowerParams: map[string]string{"power_pass": storetest.Secret}}
	if err := s.CreateMachine(t.Context(), m, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureUser(t.Context(), "alice", false); err != nil {
		t.Fatal(err)
	}
	tok, err := s.CreateToken(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}

	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var params, tokenSecret []byte
	if err := raw.QueryRow(`SELECT power_params FROM machines`).Scan(&params); err != nil {
		t.Fatal(err)
	}
	if len(params) == 0 || bytes.Contains(params, []byte(storetest.Secret)) || bytes.Contains(params, []byte("power_pass")) {
		t.Fatalf("power_params column is not sealed: %q", params)
	}
	if err := raw.QueryRow(`SELECT secret FROM tokens`).Scan(&tokenSecret); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(tokenSecret, []byte(tok.Secret)) {
		t.Fatal("token secret stored in plaintext")
	}
}

func TestWrongKey(t *testing.T) {
	u := freshSchema(t)
	openAt(t, u).Close()
	_, err := Open(t.Context(), u, testSealer(t, 2))
	if err == nil || !strings.Contains(err.Error(), "secret key") {
		t.Fatalf("Open with the wrong key: %v", err)
	}
}

// TestConcurrentOpen starts several "regions" on an empty schema at once:
// the advisory lock makes one migrate and the others find nothing to do.
func TestConcurrentOpen(t *testing.T) {
	u := freshSchema(t)
	const n = 6
	stores := make([]store.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := Open(t.Context(), u, testSealer(t, 1))
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = s
		})
	}
	wg.Wait()
	for _, s := range stores {
		if s != nil {
			t.Cleanup(func() { s.Close() })
		}
	}
	if t.Failed() {
		return
	}
	for _, s := range stores {
		if _, err := s.EnsureUser(t.Context(), "user", false); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenBadURLHidesPassword(t *testing.T) {
	_, err := Open(t.Context(), "postgres://u:hunter2@[bad", testSealer(t, 1))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open with a bad URL: %v", err)
	}
}

// TestNetworkModelMigration: a database at migration 00019 keeps its
// subnets, ranges and NICs through 00020.
func TestNetworkModelMigration(t *testing.T) {
	u := migrateSeeded(t, 19, 0, storetest.NetworkMigrationSeed("now()", "TRUE"))
	storetest.CheckNetworkMigration(t, openAt(t, u))
}

// TestDeviceMigration: a database at migration 00024 keeps its machines
// as machines through 00025, up and down and up again.
func TestDeviceMigration(t *testing.T) {
	u := migrateSeeded(t, 24, 25, storetest.DeviceMigrationSeed("now()", "TRUE"))
	storetest.CheckDeviceMigration(t, openAt(t, u))
}

// TestStorageUUIDMigration: a database at migration 00036 gets a UUID
// for every storage object and the newest script sets' ids in 00037.
func TestStorageUUIDMigration(t *testing.T) {
	u := migrateSeeded(t, 36, 0, storetest.StorageUUIDMigrationSeed("now()"))
	storetest.CheckStorageUUIDMigration(t, openAt(t, u))
}

// migrateSeeded is a fresh schema at migration at, seeded, and with
// through set migrated up to it and down again; it returns its URL.
func migrateSeeded(t *testing.T, at, through int64, seed []string) string {
	t.Helper()
	u := freshSchema(t)
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Seed(t, db, p, at, through, seed)
	return u
}

// TestAllocateTwoRegions: two regions on one database allocate AUTO
// addresses from one subnet at once; the unique index on ip keeps every
// address to one row. ANVIL_ALLOCATIONS sets how many in all (400 by
// default; BENCHMARKS.md's figure is from 10,000 on a /18).
func TestAllocateTwoRegions(t *testing.T) {
	u := freshSchema(t)
	a, b := openAt(t, u), openAt(t, u)
	total, bits := 400, 22
	if n, err := strconv.Atoi(os.Getenv("ANVIL_ALLOCATIONS")); err == nil && n > 0 {
		total, bits = n, 18
	}
	sn, err := a.CreateSubnet(t.Context(), store.Subnet{Name: "big", CIDR: fmt.Sprintf("198.18.0.0/%d", bits), Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, total)
	for _, s := range []store.Store{a, b} {
		for range 4 { // each region's requests arrive four at a time
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range total / 8 {
					if _, err := s.AllocateIP(t.Context(), store.IPAddress{SubnetID: sn.ID, AllocType: store.AllocAuto}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	took := time.Since(start)
	rows, err := a.ListIPAddresses(t.Context(), store.IPAddressFilter{SubnetID: sn.ID})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.IP] {
			t.Fatalf("%s allocated twice", r.IP)
		}
		seen[r.IP] = true
	}
	if len(seen) != total/8*8 {
		t.Fatalf("%d addresses, want %d", len(seen), total/8*8)
	}
	t.Logf("%d AUTO allocations from two regions in %v (%.0f/s)", len(seen), took, float64(len(seen))/took.Seconds())
}
