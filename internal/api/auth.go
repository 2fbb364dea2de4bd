package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/oauth"
	"github.com/anvilmetal/anvil/internal/session"
	"github.com/anvilmetal/anvil/internal/store"
)

// principal is who made a request; nil user means anonymous. rack is
// set instead for an enrolled rack, which is no user and may only call
// the rack API (dispatch refuses it everywhere else).
type principal struct {
	user *store.User
	rack *store.RackCredential
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
		return s.sessionPrincipal(r)
	}
	cred, err := oauth.Parse(h)
	if err != nil {
		return principal{}, errUnauthorized{err.Error()}
	}
	ck, tk, sig := cred.ConsumerKey, cred.TokenKey, cred.Signature
	tok, user, err := s.store.LookupToken(r.Context(), ck, tk)
	if errors.Is(err, store.ErrNotFound) {
		return s.rackPrincipal(r.Context(), ck, tk, sig)
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

// rackPrincipal checks an enrolled rack's credential: the region keeps
// only the hash of its secret.
func (s *Server) rackPrincipal(ctx context.Context, ck, tk, sig string) (principal, error) {
	c, err := s.store.RackCredentialByToken(ctx, tk)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, errUnauthorized{"Invalid access token"}
	}
	if err != nil {
		return principal{}, err
	}
	secret, _ := strings.CutPrefix(sig, "&")
	got := store.HashSecret(secret)
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.SecretHash)) != 1 || subtle.ConstantTimeCompare([]byte(ck), []byte(c.ConsumerKey)) != 1 {
		return principal{}, errUnauthorized{"Invalid access token"}
	}
	return principal{rack: &c}, nil
}

// sessionPrincipal lets a logged-in browser use the API: the session
// cookie stands in for the OAuth header, and every state-changing request
// must carry the session's CSRF token. A missing or ended session is
// anonymous, as a request without a header is.
func (s *Server) sessionPrincipal(r *http.Request) (principal, error) {
	se, user, err := session.Lookup(r.Context(), s.store, r)
	if errors.Is(err, store.ErrNotFound) {
		return principal{}, nil
	}
	if err != nil {
		return principal{}, err
	}
	if err := session.CheckCSRF(se, r); err != nil {
		return principal{}, err
	}
	return principal{user: &user}, nil
}

func truncate(s string, n int) string { return oauth.Truncate(s, n) }
