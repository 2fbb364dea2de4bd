// Package password hashes web UI passwords with PBKDF2-HMAC-SHA256 (the
// standard library's, so no dependency) and checks them in constant time.
// The stored form names its parameters, so the iteration count can be
// raised later without invalidating existing hashes.
package password

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// Iterations follows OWASP's 2023 figure for PBKDF2-HMAC-SHA256; a login
// costs about a quarter of a second of one core here, which is the point.
const Iterations = 600_000

// MinLength is the shortest password accepted.
const MinLength = 8

const scheme = "pbkdf2-sha256"

var b64 = base64.RawStdEncoding

// Hash returns the storable form "pbkdf2-sha256$ITER$SALT$KEY".
func Hash(pw string) (string, error) {
	if len(pw) < MinLength {
		return "", fmt.Errorf("a password needs at least %d characters", MinLength)
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return hashWith(pw, salt, Iterations)
}

// computed counts key derivations, so a test can see that every login
// costs one.
var computed atomic.Uint64

// Computed is how many key derivations this process has run.
func Computed() uint64 { return computed.Load() }

func hashWith(pw string, salt []byte, iter int) (string, error) {
	computed.Add(1)
	key, err := pbkdf2.Key(sha256.New, pw, salt, iter, 32)
	if err != nil {
		return "", err
	}
	return scheme + "$" + strconv.Itoa(iter) + "$" + b64.EncodeToString(salt) + "$" + b64.EncodeToString(key), nil
}

// ErrMismatch is a wrong password (or no password set).
var ErrMismatch = errors.New("wrong user name or password")

// Verify checks pw against a stored hash. An empty or malformed hash never
// matches, so a user without a password cannot log in; it costs one full
// key derivation all the same, as a wrong password does, so that how
// long a refusal takes does not tell which accounts have a password (or,
// with stored empty for a name not found, which names exist).
func Verify(stored, pw string) error {
	salt, iter, ok := parse(stored)
	if !ok {
		_, _ = hashWith(pw, noSalt, Iterations)
		return ErrMismatch
	}
	want, err := hashWith(pw, salt, iter)
	if err != nil {
		return ErrMismatch
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(stored)) != 1 {
		return ErrMismatch
	}
	return nil
}

// noSalt salts the derivation that stands in for a hash there is not.
var noSalt = make([]byte, 16)

// parse reads a stored hash's salt and iteration count.
func parse(stored string) (salt []byte, iter int, ok bool) {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != scheme {
		return nil, 0, false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > 10_000_000 {
		return nil, 0, false
	}
	salt, err = b64.DecodeString(parts[2])
	if err != nil {
		return nil, 0, false
	}
	return salt, iter, true
}
