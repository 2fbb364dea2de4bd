// Package session carries web UI logins on requests: the cookie that names
// a session and the CSRF rule for requests made with it. Both the API and
// the pages use it, so that a logged-in browser calls the same API as the
// CLI does, with the cookie standing in for the OAuth header.
package session

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

const (
	// Cookie names the session; HttpOnly, so page scripts never see it.
	Cookie = "anvil_session"
	// Header is where page scripts echo the CSRF token (MAAS's name).
	Header = "X-CSRFToken"
	// FormField is where a plain HTML form carries it.
	FormField = "csrf_token"
	// TTL is how long a login lasts.
	TTL = 12 * time.Hour
)

// ErrCSRF is a state-changing request made with the cookie but without the
// session's CSRF token: a page of another site trying to act as the user.
var ErrCSRF = errors.New("CSRF token missing or incorrect")

// Lookup returns the session the request's cookie names; store.ErrNotFound
// when there is none or it has ended.
func Lookup(ctx context.Context, st store.Store, r *http.Request) (store.Session, store.User, error) {
	c, err := r.Cookie(Cookie)
	if err != nil || c.Value == "" || len(c.Value) > 128 {
		return store.Session{}, store.User{}, store.ErrNotFound
	}
	se, u, err := st.LookupSession(ctx, c.Value)
	if err != nil {
		return se, u, err
	}
	se.ID = c.Value
	return se, u, nil
}

// Safe reports whether a method only reads.
func Safe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// CheckCSRF enforces the token on state-changing requests. The token comes
// from the header (scripts) or, for form posts, the form field; the caller
// must have parsed the form for the latter.
func CheckCSRF(se store.Session, r *http.Request) error {
	if Safe(r.Method) {
		return nil
	}
	got := r.Header.Get(Header)
	if got == "" && r.PostForm != nil {
		got = r.PostForm.Get(FormField)
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(se.CSRF)) != 1 {
		return ErrCSRF
	}
	return nil
}

// SetCookie gives the browser its session.
func SetCookie(w http.ResponseWriter, r *http.Request, se store.Session) {
	http.SetCookie(w, &http.Cookie{
		Name: Cookie, Value: se.ID, Path: "/MAAS/", Expires: se.Expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
}

// ClearCookie ends the browser's copy.
func ClearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: Cookie, Value: "", Path: "/MAAS/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
}
