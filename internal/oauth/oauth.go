// Package oauth reads MAAS's OAuth 1.0 PLAINTEXT Authorization header, the
// one credential format of both the MAAS API and the metadata API.
package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Credentials are the keys a PLAINTEXT header carries. Secret is the token
// secret: PLAINTEXT signs with "consumer_secret&token_secret", and MAAS's
// consumer secret is empty.
type Credentials struct {
	ConsumerKey, TokenKey, Signature string
}

// Secret is the token secret the signature carries, or "" when the
// signature is not of MAAS's form.
func (c Credentials) Secret() string {
	s, ok := strings.CutPrefix(c.Signature, "&")
	if !ok {
		return ""
	}
	return s
}

// Parse reads an Authorization header value. Its errors never echo a
// secret.
func Parse(h string) (Credentials, error) {
	params, err := ParseHeader(h)
	if err != nil {
		return Credentials{}, err
	}
	if m := params["oauth_signature_method"]; m != "PLAINTEXT" {
		return Credentials{}, fmt.Errorf("unsupported oauth_signature_method %q (only PLAINTEXT)", Truncate(m, 20))
	}
	c := Credentials{params["oauth_consumer_key"], params["oauth_token"], params["oauth_signature"]}
	if c.ConsumerKey == "" || c.TokenKey == "" {
		return Credentials{}, errors.New("oauth_consumer_key and oauth_token are required")
	}
	return c, nil
}

// ParseHeader splits `OAuth k="v", k2="v2"` into decoded pairs.
func ParseHeader(h string) (map[string]string, error) {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "OAuth") {
		return nil, errors.New("the Authorization header must use the OAuth scheme")
	}
	out := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("malformed OAuth parameter %q", Truncate(part, 40))
		}
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return nil, fmt.Errorf("OAuth parameter %s must be quoted", Truncate(k, 40))
		}
		dv, err := url.PathUnescape(v[1 : len(v)-1])
		if err != nil {
			return nil, fmt.Errorf("OAuth parameter %s is not percent-encoded properly", Truncate(k, 40))
		}
		// Keys and tokens are looked up in text columns, which refuse
		// these on PostgreSQL: refused here, they are not a server error.
		if !utf8.ValidString(dv) || strings.IndexByte(dv, 0) >= 0 {
			return nil, fmt.Errorf("OAuth parameter %s is not text", Truncate(k, 40))
		}
		out[strings.TrimSpace(k)] = dv
	}
	return out, nil
}

// Truncate shortens s to n bytes for error messages.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
