package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/oauth"
	"github.com/anvilmetal/anvil/internal/password"
	"github.com/anvilmetal/anvil/internal/ratelimit"
	"github.com/anvilmetal/anvil/internal/session"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/store"
)

// loginCookie carries the login form's own CSRF token (double submit):
// before a session exists there is nothing server-side to compare with,
// and without it another site could log a browser in as the attacker.
const loginCookie = "anvil_login"

type loginData struct {
	Next, Username, Error, Token string
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if _, _, err := session.Lookup(r.Context(), s.store, r); err == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	s.showLogin(w, r, http.StatusOK, loginData{Next: next})
}

func (s *Server) showLogin(w http.ResponseWriter, r *http.Request, code int, d loginData) {
	d.Token = rand.Text()
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: d.Token, Path: "/MAAS/login", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600,
	})
	v := &view{Title: "Log in", Version: s.opts.Version, Data: d, Site: s.svc.SettingString(r.Context(), settings.MAASName)}
	if code != http.StatusOK {
		w.WriteHeader(code)
	}
	s.render(w, "login.html", v)
}

func (s *Server) loginSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := formText(r.PostForm); err != nil {
		http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	d := loginData{Next: safeNext(r.PostForm.Get("next")), Username: strings.TrimSpace(r.PostForm.Get("username"))}
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get(session.FormField))) != 1 {
		d.Error = "The login form expired; please try again."
		s.showLogin(w, r, http.StatusForbidden, d)
		return
	}
	if !s.login.Allow(ratelimit.Source(r)) {
		w.Header().Set("Retry-After", "2")
		d.Error = "Too many attempts from your address; wait a few seconds."
		s.showLogin(w, r, http.StatusTooManyRequests, d)
		return
	}
	if !s.account.Allow(strings.ToLower(oauth.Truncate(d.Username, 150))) {
		w.Header().Set("Retry-After", "30")
		d.Error = "Too many attempts for this account; wait a minute."
		s.showLogin(w, r, http.StatusTooManyRequests, d)
		return
	}
	_, hash, err := s.store.PasswordHash(r.Context(), d.Username)
	if errors.Is(err, store.ErrNotFound) {
		hash = "" // never matches, costs the same (see password.Verify)
	} else if err != nil {
		s.fail(w, r, err)
		return
	}
	if password.Verify(hash, r.PostForm.Get("password")) != nil {
		s.log.Info("ui login refused", "user", d.Username, "from", ratelimit.Source(r))
		d.Error = "Wrong user name or password."
		s.showLogin(w, r, http.StatusUnauthorized, d)
		return
	}
	se, err := s.store.CreateSession(r.Context(), d.Username, sessionLength(s.svc.SettingInt(r.Context(), settings.SessionLength)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("ui login", "user", d.Username, "from", ratelimit.Source(r))
	session.SetCookie(w, r, se)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: "/MAAS/login", MaxAge: -1})
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	_ = r.ParseForm()
	se, _, err := session.Lookup(r.Context(), s.store, r)
	if err == nil {
		if err := session.CheckCSRF(se, r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if err := s.store.DeleteSession(r.Context(), se.ID); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	session.ClearCookie(w, r)
	http.Redirect(w, r, "/MAAS/login", http.StatusSeeOther)
}

// safeNext keeps the post-login redirect on this site's pages: an open
// redirect would let a link to Anvil's login send people elsewhere.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/MAAS/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, "/MAAS/api/") || strings.HasPrefix(next, "/MAAS/login") {
		return "/MAAS/machines"
	}
	return next
}

// sessionLength is how long a new login lasts: the session_length setting
// (seconds), else Anvil's default.
func sessionLength(seconds int) time.Duration {
	if seconds <= 0 {
		return session.TTL
	}
	return time.Duration(seconds) * time.Second
}
