package sqlstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
)

const (
	// systemIDAlphabet leaves out look-alikes (0/o, 1/l/i, 2/z) as MAAS does.
	systemIDAlphabet = "abcdefghjkmnpqrstuvwxy3456789"
	systemIDLength   = 6
	alphanumerics    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// randomString returns n characters drawn uniformly from alphabet with
// crypto/rand. Bytes at or above the largest multiple of len(alphabet) are
// rejected, so that no character is more likely than another.
func randomString(n int, alphabet string) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/2)
	for len(out) < n {
		rand.Read(buf) // never fails (crypto/rand panics instead)
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// newSystemID picks a system ID no machine has.
func newSystemID(ctx context.Context, q conn) (string, error) {
	for range 20 {
		id := randomString(systemIDLength, systemIDAlphabet)
		h, _, err := holder(ctx, q, `SELECT system_id, hostname FROM machines WHERE system_id = ?`, id)
		if err != nil {
			return "", fmt.Errorf("pick system ID: %w", err)
		}
		if h == "" {
			return id, nil
		}
	}
	return "", errors.New("pick system ID: every candidate was taken")
}
