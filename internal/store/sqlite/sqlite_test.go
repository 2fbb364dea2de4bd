package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/storetest"
)

func testSealer(t *testing.T, b byte) *secret.Sealer {
	t.Helper()
	s, err := secret.New(bytes.Repeat([]byte{b}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openAt(t *testing.T, path string) store.Store {
	t.Helper()
	s, err := Open(t.Context(), path, testSealer(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, filepath.Join(t.TempDir(), "anvil.db"))
	})
}

// TestPowerParamsSealed reads the raw column and the raw file: neither may
// hold the password.
func TestPowerParamsSealed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anvil.db")
	s := openAt(t, path)
	m := &machine.Machine{Hostname: "node1", PowerType: "ipmi", PowerParams: map[string]string{"power_pass": storetest.Secret}}
	if err := s.CreateMachine(t.Context(), m, nil); err != nil {
		t.Fatal(err)
	}
	tok, err := createToken(t, s)
	if err != nil {
		t.Fatal(err)
	}

	raw, err := sql.Open("sqlite", path)
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
	raw.Close()
	s.Close()
	for _, f := range []string{path, path + "-wal"} {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(storetest.Secret)) {
			t.Fatalf("%s holds the password in plaintext", f)
		}
	}
}

func createToken(t *testing.T, s store.Store) (store.Token, error) {
	if _, err := s.EnsureUser(t.Context(), "alice", false); err != nil {
		return store.Token{}, err
	}
	return s.CreateToken(t.Context(), "alice")
}

// TestWrongKey: a database opened with another key fails at Open, saying so.
func TestWrongKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anvil.db")
	s := openAt(t, path)
	s.Close()
	_, err := Open(t.Context(), path, testSealer(t, 2))
	if err == nil || !strings.Contains(err.Error(), "secret key") {
		t.Fatalf("Open with the wrong key: %v", err)
	}
}

// TestConcurrentOpen opens a fresh database from several "processes" (pools
// of their own) at once: migrations must run once, and all must work.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "anvil.db")
	const n = 6
	stores := make([]store.Store, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := Open(t.Context(), path, testSealer(t, 1))
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, s := range stores {
		defer s.Close()
		if _, err := s.EnsureUser(t.Context(), "user", i == 0); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("database file mode = %v (%v), want 0600", st.Mode().Perm(), err)
	}
}

// TestWriterInAnotherProcess writes through a second store (as `anvil
// apikey` would) while the first is busy writing: neither fails with
// SQLITE_BUSY.
func TestWriterInAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "anvil.db")
	server, other := openAt(t, path), openAt(t, path)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, s := range []store.Store{server, other, server, other} {
		wg.Go(func() {
			for j := range 50 {
				m := &machine.Machine{Hostname: "n" + string(rune('a'+i)) + "-" + string(rune('a'+j%26)) + string(rune('a'+j/26))}
				if err := s.CreateMachine(ctx, m, []machine.Event{{Type: "Created"}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := server.CountMachines(ctx); err != nil || n != 200 {
		t.Fatalf("CountMachines = %d, %v; want 200", n, err)
	}
}

func TestMigrationLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, b := &migrationLock{path: path}, &migrationLock{path: path}
	if err := a.Lock(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Lock(t.Context(), nil) }()
	select {
	case err := <-got:
		t.Fatalf("second lock taken while the first is held (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Unlock(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	b.Unlock(t.Context(), nil)
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "/tmp/x.db?mode=ro"} {
		if _, err := Open(t.Context(), p, testSealer(t, 1)); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}
