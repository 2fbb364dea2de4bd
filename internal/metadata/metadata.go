// Package metadata serves the metadata API under /MAAS/metadata/: the
// ephemeral environment's two anonymous calls (hello, enlist) and MAAS's
// token-authenticated endpoints (meta-data, user-data, op=signal). It
// speaks HTTP only; the region decides.
package metadata

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvilmetal/anvil/internal/ratelimit"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/oauth"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/store"
)

// Prefix is where the metadata API is mounted.
const Prefix = "/MAAS/metadata/"

// Limits on request bodies: an anonymous call carries at most an
// identity and an inventory (a few kilobytes for a real server); a
// signal's files are bounded again one by one (machine.CheckResultFiles).
const (
	maxJSONBody   = 256 << 10
	maxSignalBody = 32 << 20
)

// Options tune the anonymous calls' rate limits per source address.
type Options struct {
	Rate  float64 // requests per second; 5 if zero
	Burst int     // 20 if zero
	// EnlistPerHour bounds enlistments per source address and hour
	// (10 if zero). A machine enlists once; the address is the booted
	// machine's own (the environment has its own lease, also behind a
	// DHCP relay), so a boot storm of a whole rack is not affected.
	EnlistPerHour int
}

// Server is the metadata API.
type Server struct {
	svc   *region.Service
	log   *slog.Logger
	limit *ratelimit.PerKey
	// enlists bounds enlistments per source and hour: each may store an
	// inventory, so they cost the database what a hello does not.
	enlists *ratelimit.PerKey
	mux     *http.ServeMux
}

// New returns the metadata API over svc.
func New(svc *region.Service, log *slog.Logger, opts Options) *Server {
	if opts.Rate <= 0 {
		opts.Rate = 5
	}
	if opts.Burst <= 0 {
		opts.Burst = 20
	}
	if opts.EnlistPerHour <= 0 {
		opts.EnlistPerHour = 10
	}
	s := &Server{svc: svc, log: log, limit: ratelimit.New(opts.Rate, opts.Burst), mux: http.NewServeMux(),
		enlists: ratelimit.New(float64(opts.EnlistPerHour)/3600, opts.EnlistPerHour)}
	s.mux.HandleFunc("POST "+Prefix+agentapi.HelloPath, s.anonymous(call(s, svc.Hello)))
	s.mux.HandleFunc("POST "+Prefix+agentapi.EnlistPath, s.anonymous(s.enlistLimit(call(s, svc.Enlist))))
	s.mux.HandleFunc("GET "+Prefix+"{$}", func(w http.ResponseWriter, r *http.Request) {
		text(w, http.StatusOK, "2012-03-01\nlatest\n")
	})
	for _, v := range []string{"2012-03-01", "latest"} {
		p := Prefix + v + "/"
		s.mux.HandleFunc("GET "+p+"{$}", s.authed(func(w http.ResponseWriter, r *http.Request, m machine.Machine) {
			text(w, http.StatusOK, "meta-data\nuser-data\n")
		}))
		s.mux.HandleFunc("GET "+p+"meta-data/{item...}", s.authed(s.metaData))
		s.mux.HandleFunc("GET "+p+"user-data", s.authed(s.userData))
		s.mux.HandleFunc("POST "+p+"{$}", s.authed(s.signal))
	}
	s.mux.HandleFunc("GET "+Prefix+agentapi.TaskPath, s.authed(s.task))
	s.mux.HandleFunc("POST "+Prefix+agentapi.ResultPath, s.authed(s.report))
	s.mux.HandleFunc("POST "+Prefix+agentapi.OSUpPath+"{key}", s.anonymous(s.osUp))
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A path names a token (os-up) or nothing; one that is not text would
	// reach a lookup PostgreSQL refuses.
	if err := machine.CheckText(r.URL.Path); err != nil {
		jsonError(w, http.StatusBadRequest, "the path "+err.Error())
		return
	}
	s.mux.ServeHTTP(w, r)
}

// source is the caller's address; proxies are not trusted to say another.
func source(r *http.Request) string { return ratelimit.Source(r) }

func (s *Server) anonymous(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.limit.Allow(source(r)) {
			w.Header().Set("Retry-After", "1")
			jsonError(w, http.StatusTooManyRequests, "too many requests from "+source(r))
			return
		}
		h(w, r)
	}
}

func (s *Server) enlistLimit(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.enlists.Allow(source(r)) {
			w.Header().Set("Retry-After", "3600")
			jsonError(w, http.StatusTooManyRequests, "too many enlistments from "+source(r)+" this hour")
			return
		}
		h(w, r)
	}
}

// call decodes an anonymous call's JSON body, asks the region and answers.
func call[Req any](s *Server, ask func(context.Context, Req, string) (agentapi.HelloResponse, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if !decode(w, r, &req) {
			return
		}
		resp, err := ask(r.Context(), req, source(r))
		s.answer(w, r, resp, err)
	}
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, resp agentapi.HelloResponse, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("environment answered", "source", source(r), "action", resp.Action, "system_id", resp.SystemID, "phase", resp.Phase)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(resp)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		jsonError(w, http.StatusUnsupportedMediaType, "the body must be application/json")
		return false
	}
	return decodeJSON(w, r, maxJSONBody, v)
}

// decodeJSON reads a JSON body of at most limit bytes into v, refusing
// text the store cannot keep (machine.CheckJSONText) before any handler
// sees it: every string an environment sends may become a name, an
// event or a row.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		jsonError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return false
	}
	if path, err := machine.CheckJSONText(raw); err != nil {
		jsonError(w, http.StatusBadRequest, "bad request body: "+strings.TrimSpace(path+" "+err.Error()))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		jsonError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return false
	}
	if dec.More() {
		jsonError(w, http.StatusBadRequest, "bad request body: trailing data")
		return false
	}
	return true
}

// authed checks the machine token: the handler only ever sees the one
// machine the token belongs to, so no call can reach another machine.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, machine.Machine)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cred, err := oauth.Parse(r.Header.Get("Authorization"))
		if err != nil {
			text(w, http.StatusUnauthorized, "Authorization Error: "+err.Error())
			return
		}
		if m, ok := s.machineFor(w, r, cred.ConsumerKey, cred.TokenKey, cred.Secret()); ok {
			h(w, r, m)
		}
	}
}

// machineFor checks a machine token, answering the caller when it fails.
func (s *Server) machineFor(w http.ResponseWriter, r *http.Request, consumerKey, tokenKey, secret string) (machine.Machine, bool) {
	m, err := s.svc.MachineForToken(r.Context(), consumerKey, tokenKey, secret)
	switch {
	case errors.Is(err, store.ErrNotFound):
		text(w, http.StatusUnauthorized, "Authorization Error: invalid machine token")
		return m, false
	case errors.Is(err, region.ErrTokenExpired):
		text(w, http.StatusUnauthorized, "Authorization Error: "+err.Error())
		return m, false
	case err != nil:
		s.fail(w, r, err)
		return m, false
	}
	return m, true
}

// maxOSUpBody bounds what phone_home posts (instance ID, host name, SSH
// host keys).
const maxOSUpBody = 64 << 10

// osUp takes the deployed OS's report that it is up. The token is the
// path's last element, as cloud-init's phone_home cannot send a header;
// what it posts is not needed and is read only to be bounded.
func (s *Server) osUp(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxOSUpBody)); err != nil {
		text(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("at most %d bytes", maxOSUpBody))
		return
	}
	parts := strings.Split(r.PathValue("key"), ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		text(w, http.StatusUnauthorized, "Authorization Error: the path must end in the deployment's token, consumer:key:secret")
		return
	}
	m, ok := s.machineFor(w, r, parts[0], parts[1], parts[2])
	if !ok {
		return
	}
	if err := s.svc.OSReported(r.Context(), m.SystemID, m.Status, "cloud-init phone_home"); err != nil {
		s.fail(w, r, err)
		return
	}
	text(w, http.StatusOK, "OK")
}

// logPath is the request's path for logs, without an os-up token.
func logPath(r *http.Request) string {
	if i := strings.Index(r.URL.Path, agentapi.OSUpPath); i >= 0 {
		return r.URL.Path[:i+len(agentapi.OSUpPath)] + "<token>"
	}
	return r.URL.Path
}

func (s *Server) metaData(w http.ResponseWriter, r *http.Request, m machine.Machine) {
	switch r.PathValue("item") {
	case "":
		text(w, http.StatusOK, "instance-id\nlocal-hostname\npublic-keys\n")
	case "instance-id":
		text(w, http.StatusOK, m.SystemID)
	case "local-hostname":
		text(w, http.StatusOK, m.Hostname)
	case "public-keys":
		// SSH keys belong to deployment: a commissioning machine has none.
		text(w, http.StatusOK, "")
	default:
		text(w, http.StatusNotFound, "no such item")
	}
}

// task answers what the machine's current phase is to do. Images are
// fetched from the region as the machine reached it.
func (s *Server) task(w http.ResponseWriter, r *http.Request, m machine.Machine) {
	t, err := s.svc.Task(r.Context(), m, "http://"+r.Host+"/MAAS/api/2.0/images/")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(t)
}

// maxReportBody bounds one script report (output chunks are smaller).
const maxReportBody = 8 << 20

// report takes the environment's report on one script run.
func (s *Server) report(w http.ResponseWriter, r *http.Request, m machine.Machine) {
	var rep agentapi.ScriptReport
	if !decodeJSON(w, r, maxReportBody, &rep) {
		return
	}
	if err := s.svc.ReportScript(r.Context(), m, rep); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{}\n"))
}

func (s *Server) userData(w http.ResponseWriter, r *http.Request, m machine.Machine) {
	if len(m.UserData) == 0 {
		text(w, http.StatusNotFound, "no user data for "+m.SystemID)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(m.UserData)
}

// signal is MAAS's op=signal: a form (multipart when it carries files)
// with op, status, error and the result files.
func (s *Server) signal(w http.ResponseWriter, r *http.Request, m machine.Machine) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSignalBody)
	if err := r.ParseMultipartForm(8 << 20); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		text(w, http.StatusBadRequest, "bad form: "+err.Error())
		return
	}
	// The form's fields (op, status, error) are text; its files are
	// bytes, stored as they are.
	for k, vs := range r.Form {
		for _, v := range append([]string{k}, vs...) {
			if err := machine.CheckText(v); err != nil {
				text(w, http.StatusBadRequest, fmt.Sprintf("bad form: %.64q %v", k, err))
				return
			}
		}
	}
	if op := r.FormValue("op"); op != "signal" {
		text(w, http.StatusBadRequest, fmt.Sprintf("unknown op %q (only signal)", oauth.Truncate(op, 40)))
		return
	}
	files := map[string][]byte{}
	if r.MultipartForm != nil {
		for name, fhs := range r.MultipartForm.File {
			if len(name) > 128 || strings.ContainsAny(name, "/\\\x00") {
				text(w, http.StatusBadRequest, "bad result file name")
				return
			}
			f, err := fhs[0].Open()
			if err != nil {
				text(w, http.StatusBadRequest, "bad result file: "+err.Error())
				return
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				text(w, http.StatusBadRequest, "bad result file: "+err.Error())
				return
			}
			files[name] = data
		}
	}
	_, err := s.svc.Signal(r.Context(), m.SystemID, m.Status, r.FormValue("status"), r.FormValue("error"), files)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	text(w, http.StatusOK, "OK")
}

// fail answers an error in words; internal errors are logged, not shown.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ve *region.ValidationError
	var fe *machine.ForbiddenError
	var te *machine.TransitionError
	switch {
	case errors.As(err, &ve):
		jsonError(w, http.StatusBadRequest, ve.Error())
	case errors.Is(err, region.ErrTokenExpired):
		jsonError(w, http.StatusUnauthorized, err.Error())
	case errors.As(err, &fe), errors.Is(err, machine.ErrForbidden), errors.As(err, &te):
		// A signal the machine's phase does not take (INSTALLED while
		// commissioning) is the environment's mistake, not the server's.
		jsonError(w, http.StatusConflict, err.Error())
	case errors.Is(err, store.ErrConflict):
		jsonError(w, http.StatusConflict, err.Error())
	case errors.Is(err, store.ErrNotFound), errors.Is(err, region.ErrNoImage):
		jsonError(w, http.StatusNotFound, err.Error())
	default:
		s.log.Error("metadata API", "path", logPath(r), "source", source(r), "err", err)
		jsonError(w, http.StatusInternalServerError, "internal error")
	}
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(agentapi.Error{Error: msg})
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, body)
}
