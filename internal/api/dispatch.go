package api

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// request is what a handler gets: the HTTP request, who sent it, the path
// id and the merged query and body parameters.
type request struct {
	*http.Request
	who  principal
	id   string
	form url.Values
}

type handlerFunc func(w http.ResponseWriter, r *request) error

// route is one (method, op) signature of a resource.
type route struct {
	method string
	op     string // "" for the plain CRUD verb
	access access
	h      handlerFunc
}

type access int

const (
	authenticated access = iota
	anonymous            // no credentials needed
	adminOnly
)

func get(op string, a access, h handlerFunc) route  { return route{http.MethodGet, op, a, h} }
func post(op string, a access, h handlerFunc) route { return route{http.MethodPost, op, a, h} }
func put(a access, h handlerFunc) route             { return route{http.MethodPut, "", a, h} }
func del(a access, h handlerFunc) route             { return route{http.MethodDelete, "", a, h} }

// handle registers a resource: its routes are told apart by method and op,
// as MAAS's Piston handlers are. A method the resource lacks is 405; a known
// method with an op it lacks is 400 naming the signature.
func (s *Server) handle(path string, routes ...route) {
	methods := map[string]bool{}
	for _, rt := range routes {
		methods[rt.method] = true
	}
	var allow []string
	for m := range methods {
		allow = append(allow, m)
	}
	// Which methods have an anonymous route: for the others, a request
	// without credentials is refused before a byte of its body is read.
	open := map[string]bool{}
	for _, rt := range routes {
		if rt.access == anonymous {
			open[rt.method] = true
		}
	}
	sort.Strings(allow)
	s.mux.HandleFunc(Prefix+path, func(w http.ResponseWriter, r *http.Request) {
		if !methods[r.Method] {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeText(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		// Credentials are headers (OAuth, or a session cookie with its
		// CSRF token): who is asking is known before the body is read.
		who, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if who.anonymous() && !open[r.Method] {
			s.writeError(w, r, errUnauthorized{"credentials are required for this operation"})
			return
		}
		limit := s.opts.MaxBody
		if who.anonymous() {
			limit = min(limit, maxAnonymousBody)
		}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, who))
		req := &request{Request: r, id: r.PathValue("id"), who: who}
		if err := s.parseForm(w, req, limit); err != nil {
			s.writeError(w, r, err)
			return
		}
		op := req.form.Get("op")
		var found *route
		for i := range routes {
			if routes[i].method == r.Method && routes[i].op == op {
				found = &routes[i]
				break
			}
		}
		if found == nil {
			writeText(w, http.StatusBadRequest, fmt.Sprintf("Unrecognised signature: method=%s op=%s", r.Method, op))
			return
		}
		switch {
		case found.access != anonymous && who.anonymous():
			s.writeError(w, r, errUnauthorized{"credentials are required for this operation"})
			return
		case found.access == adminOnly && !who.user.Admin:
			writeText(w, http.StatusForbidden, "This operation needs an administrator")
			return
		}
		if err := found.h(w, req); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// maxAnonymousBody caps what a caller without credentials may send: no
// anonymous call takes more than a few parameters.
const maxAnonymousBody = 16 << 10

// parseForm merges the query string with a urlencoded or multipart body,
// refusing bodies over limit.
func (s *Server) parseForm(w http.ResponseWriter, r *request, limit int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	// URL.Query drops a query it cannot parse in full (a bad escape, or
	// more parameters than net/url takes): a filtered list would then
	// answer every machine. Refuse it instead.
	form, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return &fieldError{field: "query", msg: "cannot parse the query string: " + err.Error()}
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch ct {
		case "multipart/form-data":
			if err := r.ParseMultipartForm(limit); err != nil {
				return badBody(err)
			}
			for k, v := range r.MultipartForm.Value {
				form[k] = append(form[k], v...)
			}
		case "application/x-www-form-urlencoded", "":
			if err := r.ParseForm(); err != nil {
				return badBody(err)
			}
			for k, v := range r.PostForm {
				form[k] = append(form[k], v...)
			}
		default:
			return &fieldError{field: "Content-Type", msg: fmt.Sprintf("%q is not accepted: send application/x-www-form-urlencoded or multipart/form-data", ct)}
		}
	}
	// A repeated op (query and body disagreeing) is ambiguous.
	if ops := form["op"]; len(ops) > 1 {
		for _, o := range ops[1:] {
			if o != ops[0] {
				return &fieldError{field: "op", msg: "op given twice with different values"}
			}
		}
		form["op"] = ops[:1]
	}
	r.form = form
	return nil
}

func badBody(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	return &fieldError{field: "body", msg: "cannot parse request body: " + err.Error()}
}
