package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

// unsetEnv removes ANVIL_SECRET_KEY for the test; Setenv first makes the
// testing package restore any value the environment had.
func unsetEnv(t *testing.T) {
	t.Setenv(EnvKey, "")
	os.Unsetenv(EnvKey)
}

func mustNew(t *testing.T, key []byte) *Sealer {
	t.Helper()
	s, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := mustNew(t, testKey(1))
	for _, msg := range [][]byte{nil, []byte("x"), []byte(`{"power_pass":"hunter2"}`), bytes.Repeat([]byte("a"), 10000)} {
		sealed, err := s.Seal(msg)
		if err != nil {
			t.Fatal(err)
		}
		// A message of a byte or two turns up in random ciphertext by
		// chance; from eight bytes on, finding it means it was not sealed.
		if len(msg) >= 8 && bytes.Contains(sealed, msg) {
			t.Fatalf("sealed output contains the plaintext")
		}
		got, err := s.Open(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("Open = %q, want %q", got, msg)
		}
	}
}

func TestSealUsesFreshNonce(t *testing.T) {
	s := mustNew(t, testKey(1))
	a, _ := s.Seal([]byte("same"))
	b, _ := s.Seal([]byte("same"))
	if bytes.Equal(a, b) {
		t.Fatal("sealing twice gave identical output")
	}
}

func TestOpenFailures(t *testing.T) {
	s := mustNew(t, testKey(1))
	sealed, _ := s.Seal([]byte("secret"))

	flip := func(i int) []byte {
		c := bytes.Clone(sealed)
		c[i] ^= 0x80
		return c
	}
	cases := map[string]struct {
		s    *Sealer
		data []byte
	}{
		"wrong key":       {mustNew(t, testKey(2)), sealed},
		"flipped version": {s, flip(0)},
		"flipped nonce":   {s, flip(1)},
		"flipped body":    {s, flip(len(sealed) - 1)},
		"truncated":       {s, sealed[:len(sealed)-1]},
		"too short":       {s, sealed[:5]},
		"empty":           {s, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := c.s.Open(c.data)
			if !errors.Is(err, ErrOpen) {
				t.Fatalf("Open error = %v, want ErrOpen", err)
			}
			if !strings.Contains(err.Error(), "wrong key or corrupted data") {
				t.Fatalf("error %q does not say what went wrong", err)
			}
		})
	}
}

func TestNewRejectsBadKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := New(make([]byte, n)); err == nil {
			t.Errorf("New accepted a %d-byte key", n)
		}
	}
}

func TestLoadOrCreateCreatesKeyFile(t *testing.T) {
	unsetEnv(t)
	dir := filepath.Join(t.TempDir(), "data")

	s1, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", st.Mode().Perm())
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, want 0700", dst.Mode().Perm())
	}
	b, _ := os.ReadFile(filepath.Join(dir, KeyFile))
	if k, err := hex.DecodeString(strings.TrimSpace(string(b))); err != nil || len(k) != KeySize {
		t.Fatalf("key file holds %q, want 64 hex characters", b)
	}

	// A second load reads the same key: what s1 sealed, s2 opens.
	s2, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := s1.Seal([]byte("pw"))
	if got, err := s2.Open(sealed); err != nil || string(got) != "pw" {
		t.Fatalf("reloaded key cannot open: %q, %v", got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLoadOrCreateConcurrentAgree(t *testing.T) {
	unsetEnv(t)
	dir := t.TempDir()
	const n = 8
	sealers := make([]*Sealer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := LoadOrCreate(dir)
			if err != nil {
				t.Error(err)
			}
			sealers[i] = s
		})
	}
	wg.Wait()
	sealed, _ := sealers[0].Seal([]byte("x"))
	for i, s := range sealers {
		if _, err := s.Open(sealed); err != nil {
			t.Fatalf("sealer %d has a different key", i)
		}
	}
}

func TestLoadOrCreateFromEnv(t *testing.T) {
	key := testKey(7)
	ref := mustNew(t, key)
	sealed, _ := ref.Seal([]byte("pw"))
	for name, v := range map[string]string{
		"hex":        hex.EncodeToString(key),
		"hex upper":  strings.ToUpper(hex.EncodeToString(key)),
		"base64":     base64.StdEncoding.EncodeToString(key),
		"base64 raw": base64.RawURLEncoding.EncodeToString(key),
		"newline":    hex.EncodeToString(key) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvKey, v)
			dir := t.TempDir()
			s, err := LoadOrCreate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Open(sealed); err != nil {
				t.Fatalf("env key not used: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, KeyFile)); err == nil {
				t.Error("a key file was created although the env var is set")
			}
		})
	}
}

func TestLoadOrCreateRejectsBadEnv(t *testing.T) {
	for _, v := range []string{"", "abc", strings.Repeat("z", 64), base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		t.Setenv(EnvKey, v)
		_, err := LoadOrCreate(t.TempDir())
		if err == nil {
			t.Fatalf("accepted %q", v)
		}
		if v != "" && strings.Contains(err.Error(), v) {
			t.Fatalf("error echoes the key: %v", err)
		}
	}
}

func TestLoadOrCreateRejectsBadKeyFile(t *testing.T) {
	unsetEnv(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(dir); err == nil {
		t.Fatal("accepted a corrupt key file")
	}
}
