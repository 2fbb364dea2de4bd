// Package secret seals secrets at rest (power parameters, API token secrets)
// with AES-256-GCM.
//
// The key comes from the environment (ANVIL_SECRET_KEY) or from a file in the
// data directory that is created on first start. Losing the key loses every
// sealed value, so the file is created once and never rewritten.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the key length in bytes (AES-256).
const KeySize = 32

// EnvKey names the environment variable that overrides the key file.
const EnvKey = "ANVIL_SECRET_KEY"

// KeyFile is the key file's name inside the data directory.
const KeyFile = "secret.key"

// version prefixes every sealed value so that the format (or the key, with a
// key ID) can change later without guessing what old values are.
const version byte = 1

// ErrOpen is returned by Open for data that does not decrypt: the wrong key,
// or corrupted or truncated data. GCM cannot tell those apart.
var ErrOpen = errors.New("secret: cannot open sealed data: wrong key or corrupted data")

// Sealer encrypts and authenticates small values. It is safe for concurrent
// use.
type Sealer struct {
	aead cipher.AEAD
}

// New returns a Sealer for a 32-byte key.
func New(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext. Every call uses a fresh random nonce, so sealing
// the same value twice gives different output.
func (s *Sealer) Seal(plaintext []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(plaintext)+s.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("secret: nonce: %w", err)
	}
	// The version byte is authenticated too, so it cannot be swapped.
	return s.aead.Seal(out, out[1:], plaintext, out[:1]), nil
}

// Open decrypts what Seal produced. It fails with an error wrapping ErrOpen
// when the key is wrong or the data was changed.
func (s *Sealer) Open(sealed []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(sealed) < 1+ns+s.aead.Overhead() {
		return nil, fmt.Errorf("%w (%d bytes is too short)", ErrOpen, len(sealed))
	}
	if sealed[0] != version {
		return nil, fmt.Errorf("%w (unknown format version %d)", ErrOpen, sealed[0])
	}
	plain, err := s.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], sealed[:1])
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// LoadOrCreate returns the Sealer for this installation: the key in
// ANVIL_SECRET_KEY if set (64 hex characters, or base64 of 32 bytes), else
// the key in <dataDir>/secret.key, which is created (mode 0600, with dataDir
// 0700) holding 32 random bytes in hex when it does not exist yet.
func LoadOrCreate(dataDir string) (*Sealer, error) {
	if v, ok := os.LookupEnv(EnvKey); ok {
		key, err := ParseKey(v)
		if err != nil {
			return nil, fmt.Errorf("secret: %s: %w", EnvKey, err)
		}
		return New(key)
	}
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createKeyFile(dataDir, path)
	}
	if err != nil {
		return nil, err
	}
	return New(key)
}

// ParseKey decodes a key given as 64 hex characters or as base64 (standard
// or URL alphabet, padded or not) of 32 bytes. Errors never echo the value.
func ParseKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	if len(v) == 2*KeySize {
		if key, err := hex.DecodeString(v); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
	} {
		if key, err := enc.DecodeString(v); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, fmt.Errorf("key must be %d hex characters or base64 of %d bytes", 2*KeySize, KeySize)
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret: read key: %w", err)
	}
	key, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secret: %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key to a temporary file and links it into place.
// A link never replaces an existing file, so when two processes start at
// once on a fresh data directory both end up with the one that won.
func createKeyFile(dataDir, path string) ([]byte, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("secret: create data directory: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secret: generate key: %w", err)
	}
	tmp, err := os.CreateTemp(dataDir, KeyFile+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("secret: create key: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod guards against a
	// platform where it does not.
	err = errors.Join(tmp.Chmod(0o600), writeAll(tmp, hex.EncodeToString(key)+"\n"), tmp.Sync(), tmp.Close())
	if err != nil {
		return nil, fmt.Errorf("secret: write key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("secret: install key: %w", err)
	}
	return key, nil
}

func writeAll(f *os.File, s string) error {
	_, err := f.WriteString(s)
	return err
}
