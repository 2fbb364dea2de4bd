package client

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Credentials are the three parts of a MAAS API key, "consumer:token:secret".
// MAAS issues keys whose consumer secret is empty, so PLAINTEXT signing needs
// only the token secret.
type Credentials struct {
	ConsumerKey string
	TokenKey    string
	TokenSecret string
}

// ParseAPIKey splits a MAAS API key. The error never repeats the key, since
// it is a secret and error text ends up in terminals and logs.
func ParseAPIKey(key string) (Credentials, error) {
	parts := strings.Split(strings.TrimSpace(key), ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Credentials{}, errors.New("malformed API key: want three non-empty parts, consumer:token:secret")
	}
	return Credentials{ConsumerKey: parts[0], TokenKey: parts[1], TokenSecret: parts[2]}, nil
}

// authorization renders the OAuth 1.0 PLAINTEXT Authorization header MAAS
// expects. Values are percent-encoded as RFC 5849 §3.6 requires, so the
// signature "&secret" goes on the wire as "%26secret" — exactly what the
// maas CLI (oauthlib) and gomaasapi send, and what a MAAS server decodes.
func (c Credentials) authorization(now time.Time, nonce string) string {
	fields := []struct{ k, v string }{
		{"oauth_version", "1.0"},
		{"oauth_signature_method", "PLAINTEXT"},
		{"oauth_consumer_key", c.ConsumerKey},
		{"oauth_token", c.TokenKey},
		// PLAINTEXT signature: consumer secret (always empty) & token secret.
		{"oauth_signature", "&" + c.TokenSecret},
		{"oauth_nonce", nonce},
		{"oauth_timestamp", strconv.FormatInt(now.Unix(), 10)},
	}
	var b strings.Builder
	b.WriteString("OAuth ")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=\"%s\"", f.k, PercentEncode(f.v))
	}
	return b.String()
}

// PercentEncode encodes s as OAuth 1.0 requires (RFC 5849 §3.6): every byte
// except ALPHA, DIGIT, '-', '.', '_' and '~' becomes %XX with upper-case hex.
// url.QueryEscape differs (space as '+', '~' escaped), hence our own.
func PercentEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// newNonce returns 128 random bits in hex; a nonce only needs to be unique.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
