// Package redfishbmc is a small Redfish service for the lab: one service
// root fronting one system or several (as a chassis manager does), with
// power, boot override, NICs, basic auth and sessions. It serves what
// gofish and curl need, injects lab.Faults, and records every command in a
// lab.Log with its start and end so tests can prove Anvil never overlapped
// commands on one service. The service itself answers concurrently: it is
// Anvil's job, not the BMC's, to serialise.
package redfishbmc

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
)

// Options configure a service.
type Options struct {
	// User and Password are the only credentials accepted; both empty
	// turns authentication off.
	User, Password string
	// Systems are the machines behind the service; their IDs are the
	// Redfish system ids.
	Systems []lab.Machine
	// Faults are applied to every request; SetFaults changes them later.
	Faults lab.Faults
	// Log, if set, records each system command.
	Log *lab.Log
	// ResetTypes are the ResetType values advertised and accepted; nil
	// means all of AllResetTypes. Tests narrow it to see drivers pick an
	// alternative or report the action unsupported.
	ResetTypes []string
}

// AllResetTypes are the ResetType values the service can carry out.
var AllResetTypes = []string{"On", "ForceOn", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart", "PowerCycle", "PushPowerButton"}

// Service is a running (or not yet started) Redfish service.
type Service struct {
	opts    Options
	systems map[string]lab.Machine

	mu       sync.Mutex
	faults   lab.Faults
	sessions map[string]string // session id -> token
	nextID   int
	srv      *http.Server
	closed   chan struct{} // releases hung requests on Close
}

// New returns a service for opts; Start makes it listen.
func New(opts Options) *Service {
	if opts.ResetTypes == nil {
		opts.ResetTypes = AllResetTypes
	}
	s := &Service{
		opts: opts, systems: map[string]lab.Machine{}, faults: opts.Faults,
		sessions: map[string]string{}, closed: make(chan struct{}),
	}
	for _, m := range opts.Systems {
		s.systems[m.ID()] = m
	}
	return s
}

// SetFaults replaces the faults injected from now on.
func (s *Service) SetFaults(f lab.Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// Sessions counts the sessions open, so tests can see clients log out.
func (s *Service) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Start listens on addr ("127.0.0.1:0" picks a port) and returns the
// service's base URL. With useTLS it serves HTTPS with a self-signed
// certificate made now, which no client trusts unless told to skip
// verification, as with most BMCs out of the box.
func (s *Service) Start(addr string, useTLS bool) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		// Clients failing TLS verification on purpose would fill test
		// output with handshake errors.
		ErrorLog: log.New(io.Discard, "", 0),
		// HTTP/1.1 only: dropping a request hijacks its connection.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	scheme := "http"
	if useTLS {
		cert, err := selfSigned(ln.Addr().(*net.TCPAddr).IP)
		if err != nil {
			ln.Close()
			return "", err
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
		scheme = "https"
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
	return scheme + "://" + ln.Addr().String(), nil
}

// Close stops the service, dropping open connections and hung requests.
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return
	default:
	}
	close(s.closed)
	if s.srv != nil {
		s.srv.Close()
	}
}

// serve applies the faults, then authenticates and routes.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	// A command counts from its arrival, delay included, so that the log
	// shows when two were at the BMC together.
	r = r.WithContext(context.WithValue(r.Context(), arrivalKey{}, time.Now()))
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	if f.Hang {
		// Answer nothing until the client gives up or the lab shuts down.
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
	if f.LossRate > 0 && rand.Float64() < f.LossRate {
		drop(w)
		return
	}
	if !s.public(r) && !s.authorised(r, f.WrongPassword) {
		w.Header().Set("WWW-Authenticate", `Basic realm="Redfish"`)
		writeError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", "the credentials were refused")
		return
	}
	s.route(w, r, f.WrongPassword)
}

// drop closes the connection without answering, as a BMC that lost the
// packet or crashed mid-request would.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", "request dropped")
		return
	}
	if conn, _, err := hj.Hijack(); err == nil {
		conn.Close()
	}
}

// public says whether r needs no credentials: the service root (the
// Redfish specification lets anyone read it) and logging in.
func (s *Service) public(r *http.Request) bool {
	p := cleanPath(r.URL.Path)
	return (r.Method == http.MethodGet && (p == "/redfish" || p == "/redfish/v1")) ||
		(r.Method == http.MethodPost && p == sessionsPath)
}

// authorised checks basic auth or a session token.
func (s *Service) authorised(r *http.Request, wrongPassword bool) bool {
	if s.opts.User == "" && s.opts.Password == "" {
		return true
	}
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, t := range s.sessions {
			if t == tok {
				return true
			}
		}
		return false
	}
	user, pass, ok := r.BasicAuth()
	return ok && s.credentialsOK(user, pass, wrongPassword)
}

func (s *Service) credentialsOK(user, pass string, wrongPassword bool) bool {
	return !wrongPassword && user == s.opts.User && pass == s.opts.Password
}

type arrivalKey struct{}

// record logs a system command from its arrival until now.
func (s *Service) record(r *http.Request, id, command string) {
	if s.opts.Log != nil {
		start, _ := r.Context().Value(arrivalKey{}).(time.Time)
		s.opts.Log.Record(lab.LogEntry{Machine: id, Command: command, Start: start, End: time.Now()})
	}
}

func cleanPath(p string) string {
	return strings.TrimRight(p, "/")
}
