package open

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

func sealer(t *testing.T) *secret.Sealer {
	s, err := secret.New(bytes.Repeat([]byte{3}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenSQLite(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	for _, tc := range []struct{ url, file string }{
		{"", filepath.Join(dataDir, DefaultSQLiteFile)},
		{"sqlite:", filepath.Join(dataDir, DefaultSQLiteFile)},
		{"sqlite:" + filepath.Join(dir, "a.db"), filepath.Join(dir, "a.db")},
		{"sqlite://" + filepath.Join(dir, "b.db"), filepath.Join(dir, "b.db")},
	} {
		s, err := Open(t.Context(), tc.url, dataDir, sealer(t))
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.url, err)
		}
		if _, err := s.ListZones(t.Context()); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := os.Stat(tc.file); err != nil {
			t.Fatalf("Open(%q) did not create %s: %v", tc.url, tc.file, err)
		}
	}
	if st, err := os.Stat(dataDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode = %v, %v; want 0700", st.Mode().Perm(), err)
	}
}

func TestOpenPostgres(t *testing.T) {
	u := pgtest.URL(t) // a fresh database, dropped afterwards
	s, err := Open(t.Context(), strings.Replace(u, "postgres://", "postgresql://", 1), t.TempDir(), sealer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListZones(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejects(t *testing.T) {
	if _, err := Open(t.Context(), "mysql://x", t.TempDir(), sealer(t)); err == nil || !strings.Contains(err.Error(), `"mysql"`) {
		t.Fatalf("unsupported scheme: %v", err)
	}
	if _, err := Open(t.Context(), "", t.TempDir(), nil); err == nil {
		t.Fatal("a nil sealer was accepted")
	}
}
