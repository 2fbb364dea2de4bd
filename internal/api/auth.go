package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// principal is who made a request; nil user means anonymous.
type principal struct {
	user *store.User
}

func (p principal) anonymous() bool { return p.user == nil }

func (p principal) actor() machine.Actor {
	if p.user == nil {
		return machine.Actor{}
	}
	return machine.Actor{Name: p.user.Name, Admin: p.user.Admin}
}

type ctxKey struct{}

func principalFrom(ctx context.Context) principal {
	p, _ := ctx.Value(ctxKey{}).(principal)
	return p
}

// errUnauthorized is a bad or missing credential: always 401, and the
// message never echoes the secret.
type errUnauthorized struct{ reason string }

func (e errUnauthorized) Error() string { return "Authorization Error: " + e.reason }

// authenticate reads MAAS's OAuth 1.0 PLAINTEXT header. No header is an
// anonymous request; a header that is present but wrong is refused rather
// than downgraded to anonymous, so a typo in a key is never silent.
func (s *Server) authenticate(r *http.Request) (principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return principal{}, nil
	}
	params, err := parseOAuthHeader(h)
	if err != nil {
		return principal{}, errUnauthorized{err.Error()}
	}
	if m := params["oauth_signature_method"]; m != "PLAINTEXT" {
		return principal{}, errUnauthorized{fmt.Sprintf("unsupported oauth_signature_method %q (only PLAINTEXT)", m)}
	}
	ck, tk, sig := params["oauth_consumer_key"], params["oauth_token"], params["oauth_signature"]
	if ck == "" || tk == "" {
		return principal{}, errUnauthorized{"oauth_consumer_key and oauth_token are required"}
	}
	tok, user, err := s.store.LookupToken(r.Context(), ck, tk)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errUnauthorized{"Invalid access token"}
	}
	if err != nil {
		return principal{}, err
	}
	// PLAINTEXT signature is "consumer_secret&token_secret"; MAAS's
	// consumer secret is empty.
	want := "&" + tok.Secret
	if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
		return principal{}, errUnauthorized{"Invalid access token"}
	}
	return principal{user: &user}, nil
}

// parseOAuthHeader splits `OAuth k="v", k2="v2"` into decoded pairs.
func parseOAuthHeader(h string) (map[string]string, error) {
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
			return nil, fmt.Errorf("malformed OAuth parameter %q", truncate(part, 40))
		}
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return nil, fmt.Errorf("OAuth parameter %s must be quoted", truncate(k, 40))
		}
		dv, err := url.PathUnescape(v[1 : len(v)-1])
		if err != nil {
			return nil, fmt.Errorf("OAuth parameter %s is not percent-encoded properly", truncate(k, 40))
		}
		out[strings.TrimSpace(k)] = dv
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
