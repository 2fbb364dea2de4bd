package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/anvilmetal/anvil/internal/api"
	"github.com/anvilmetal/anvil/internal/httpserve"
	"github.com/anvilmetal/anvil/internal/metadata"
)

// TLSConfig serves the API and the web pages over HTTPS, as MAAS does on
// port 5443 once TLS is configured.
type TLSConfig struct {
	CertFile, KeyFile string
	// Listen is the HTTPS address (":5443" when empty).
	Listen string
}

func (c TLSConfig) enabled() bool { return c.CertFile != "" || c.KeyFile != "" }

// listen prepares the plain listener ln and, with TLS, an HTTPS one.
func (s *Server) listen(base context.Context, cfg Config, ln net.Listener, mux http.Handler) error {
	limits := cfg.HTTP.WithDefaults()
	if !cfg.TLS.enabled() {
		s.add(httpserve.New(mux, limits, base), limits.Listen(ln), cfg.Log)
		return nil
	}
	if cfg.TLS.CertFile == "" || cfg.TLS.KeyFile == "" {
		return errors.New("TLS needs both a certificate and its key")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLS.CertFile, cfg.TLS.KeyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	addr := cfg.TLS.Listen
	if addr == "" {
		addr = ":5443"
	}
	tln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	s.TLSAddr = tln.Addr()
	secure := httpserve.New(hsts(mux), limits, base)
	secure.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	// TLS goes outside the cap: net/http must see the *tls.Conn itself to
	// fill in r.TLS (Secure cookies) and to answer plain HTTP with a 400.
	s.add(secure, tls.NewListener(limits.Listen(tln), secure.TLSConfig), cfg.Log)
	_, port, _ := net.SplitHostPort(tln.Addr().String())
	s.add(httpserve.New(plainUnderTLS(mux, port), limits, base), limits.Listen(ln), cfg.Log)
	return nil
}

func (s *Server) add(hs *http.Server, ln net.Listener, log *slog.Logger) {
	// net/http's own complaints (failed handshakes, accept errors) are a
	// client's doing: debug level, so a flood of them fills no disk.
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	s.servers = append(s.servers, hs)
	s.lns = append(s.lns, ln)
}

// serve runs every server; the first to stop by itself is Wait's answer.
func (s *Server) serve() {
	for i, hs := range s.servers {
		go func(hs *http.Server, ln net.Listener) {
			err := hs.Serve(ln)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			select {
			case s.done <- err:
			default:
			}
		}(hs, s.lns[i])
	}
}

// hsts tells browsers to come back over HTTPS only.
func hsts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		h.ServeHTTP(w, r)
	})
}

// plainUnderTLS is the plain port once TLS is on. What booting machines
// need stays there, since an ephemeral environment has no CA to check a
// certificate with (MAAS keeps them plain too): the metadata API and image
// downloads. So do health and metrics, and requests from this host (the
// rack in this process, a CLI on the region). Anything else that carries
// credentials, or would, goes to HTTPS: pages are redirected, other
// requests refused in words, so no key or password is ever read off the
// wire.
func plainUnderTLS(h http.Handler, tlsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, metadata.Prefix), strings.HasPrefix(p, api.Prefix+"images/"),
			p == "/healthz", p == "/metrics", fromLoopback(r):
			h.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		to := "https://" + net.JoinHostPort(strings.Trim(host, "[]"), tlsPort) + r.URL.RequestURI()
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.Header.Get("Authorization") == "" {
			http.Redirect(w, r, to, http.StatusPermanentRedirect)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "This server takes API requests over HTTPS: use %s\n", to)
	})
}

func fromLoopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}
