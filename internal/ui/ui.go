// Package ui serves Anvil's web pages under /MAAS/: server-rendered HTML
// (html/template) with a small script. Pages only read; every change a
// person makes goes from the page's script to the MAAS API under
// /MAAS/api/2.0/ with the session cookie and its CSRF token, the same code
// path the CLI takes.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/ratelimit"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/session"
	"github.com/anvilmetal/anvil/internal/settings"
	"github.com/anvilmetal/anvil/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the pages live, beside the API.
const Prefix = "/MAAS/"

// Options tune the pages.
type Options struct {
	Version string
	// StreamPoll is how often the live stream re-reads the store when no
	// local change woke it (changes made by other region processes).
	StreamPoll time.Duration
	// SampleEvery is how often the statistics plots take a sample.
	SampleEvery time.Duration
	// BootDir is the boot directory of the rack in this process, whose
	// loaders and ephemeral environment the pages check; empty when the
	// process runs no rack.
	BootDir string
	// DNS is what the racks' DNS serves, for the DNS page; nil leaves the
	// page without machines' names and lookups.
	DNS func(context.Context) (dns.Data, error)
}

// Server serves the pages.
type Server struct {
	store store.Store
	svc   *region.Service
	log   *slog.Logger
	opts  Options
	mux   *http.ServeMux
	tmpl  *template.Template
	fleet *fleet
	stats *history
	login *ratelimit.PerKey
	// account limits password checks per user name, whatever address
	// they come from: a guesser with many addresses still gets ten, then
	// one every thirty seconds. Names nobody has are limited alike, so the
	// answers tell no one which accounts exist.
	account *ratelimit.PerKey
}

// New builds the pages over a region service.
func New(svc *region.Service, log *slog.Logger, opts Options) (*Server, error) {
	if opts.StreamPoll == 0 {
		opts.StreamPoll = 2 * time.Second
	}
	if opts.SampleEvery == 0 {
		opts.SampleEvery = 30 * time.Second
	}
	s := &Server{
		store: svc.Store, svc: svc, log: log, opts: opts, mux: http.NewServeMux(),
		fleet: newFleet(svc.Store, svc.Hub.Changed), stats: newHistory(2880),
		// Password checks cost a quarter of a CPU-second each: a burst of
		// five, then one every two seconds per address.
		login:   ratelimit.New(0.5, 5),
		account: ratelimit.New(1.0/30, 10),
	}
	var err error
	if s.tmpl, err = parseTemplates(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if err := requestText(r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// requestText refuses, before any page reads them, a path or query
// parameter that is not text the store can keep (machine.CheckText):
// pages look machines and names up by them. A form the page reads
// itself (the login) is checked where it is read.
func requestText(r *http.Request) error {
	if err := machine.CheckText(r.URL.Path); err != nil {
		return fmt.Errorf("the path %v", err)
	}
	q, _ := url.ParseQuery(r.URL.RawQuery)
	return formText(q)
}

// formText refuses a form with a name or value that is not text.
func formText(form url.Values) error {
	for k, vs := range form {
		for _, v := range append([]string{k}, vs...) {
			if err := machine.CheckText(v); err != nil {
				return fmt.Errorf("%.64q %v", k, err)
			}
		}
	}
	return nil
}

func (s *Server) routes() {
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /MAAS/static/", http.StripPrefix("/MAAS/static/", cacheFor(time.Hour, http.FileServerFS(static))))
	s.mux.HandleFunc("GET /MAAS/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/MAAS/machines", http.StatusSeeOther)
	})
	s.mux.HandleFunc("GET /MAAS/login", s.loginPage)
	s.mux.HandleFunc("POST /MAAS/login", s.loginSubmit)
	s.mux.HandleFunc("POST /MAAS/logout", s.logout)
	s.mux.HandleFunc("GET /MAAS/machines", s.page(s.machinesPage))
	s.mux.HandleFunc("GET /MAAS/machines/rows", s.fragment(s.machineRows))
	s.mux.HandleFunc("GET /MAAS/machines/add", s.page(s.addPage))
	s.mux.HandleFunc("GET /MAAS/machine/{id}", s.page(s.machinePage))
	s.mux.HandleFunc("GET /MAAS/machine/{id}/live", s.fragment(s.machineLive))
	s.mux.HandleFunc("GET /MAAS/machine/{id}/actions", s.fragment(s.machineActions))
	s.mux.HandleFunc("GET /MAAS/machine/{id}/results/{result}", s.page(s.resultPage))
	s.mux.HandleFunc("GET /MAAS/network", s.page(s.networkPage))
	s.mux.HandleFunc("GET /MAAS/dns", s.page(s.dnsPage))
	s.mux.HandleFunc("GET /MAAS/controllers", s.page(s.controllersPage))
	s.mux.HandleFunc("GET /MAAS/scripts", s.page(s.scriptsPage))
	s.mux.HandleFunc("GET /MAAS/settings", s.page(s.settingsPage))
	s.mux.HandleFunc("GET /MAAS/discoveries", s.page(s.discoveriesPage))
	s.mux.HandleFunc("GET /MAAS/stats", s.page(s.statsPage))
	s.mux.HandleFunc("GET /MAAS/stats/live", s.fragment(s.statsLive))
	s.mux.HandleFunc("GET /MAAS/stream", s.fragment(s.stream))
	s.mux.HandleFunc("/MAAS/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page: "+r.URL.Path, http.StatusNotFound)
	})
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// view is what every page template gets.
type view struct {
	Title string
	// Site is the site's name (the maas_name setting).
	Site    string
	Nav     string
	User    store.User
	CSRF    string
	Version string
	// State names what the page shows ("generation last-event"), as the
	// live stream names it, so that the page fetches again only when the
	// stream reports something newer.
	State string
	Data  any
}

// handler renders one page for a logged-in user; it fills v.Data (and may
// set the title) and names the template.
type handler func(w http.ResponseWriter, r *http.Request, v *view) (string, error)

// page wraps a full page: without a session it sends the browser to the
// login page and back.
func (s *Server) page(h handler) http.HandlerFunc {
	return s.withSession(h, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/MAAS/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}

// fragment wraps the parts scripts fetch: without a session they answer
// 401, which the script turns into a trip to the login page.
func (s *Server) fragment(h handler) http.HandlerFunc {
	return s.withSession(h, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "log in first", http.StatusUnauthorized)
	})
}

func (s *Server) withSession(h handler, anonymous http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		se, u, err := session.Lookup(r.Context(), s.store, r)
		if errors.Is(err, store.ErrNotFound) {
			anonymous(w, r)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		// The state is read before the data: a change in between makes the
		// page look older than it is, never newer, so it is fetched again.
		state, err := s.state(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		v := &view{User: u, CSRF: se.CSRF, Version: s.opts.Version, State: state, Site: s.svc.SettingString(r.Context(), settings.MAASName)}
		w.Header().Set("X-Anvil-State", state)
		name, err := h(w, r, v)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if name != "" {
			s.render(w, name, v)
		}
	}
}

// badRequest is a request the page cannot answer as asked: a 400 in words.
type badRequest string

func (e badRequest) Error() string { return string(e) }

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad badRequest
	if errors.As(err, &bad) {
		http.Error(w, bad.Error(), http.StatusBadRequest)
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Error("page failed", "path", r.URL.Path, "err", err)
	http.Error(w, "internal error; the server log has the details", http.StatusInternalServerError)
}

// render executes a page or fragment template into a buffer first, so that
// a template error is a clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, name string, v *view) {
	t := s.tmpl.Lookup(name)
	if t == nil {
		http.Error(w, "no template "+name, http.StatusInternalServerError)
		return
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		s.log.Error("render page", "template", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(b.String()))
}

// Run takes the samples the statistics page plots, until ctx ends.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.SampleEvery)
	defer t.Stop()
	for {
		if _, err := s.fleet.refresh(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("ui sample", "err", err)
		} else {
			s.stats.add(sampleOf(time.Now(), s.fleet.current(), s.svc.Power.Drivers().Queryable))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
