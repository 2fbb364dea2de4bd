package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// request is what a handler gets: the HTTP request, who sent it, the path
// id and the merged query and body parameters.
type request struct {
	*http.Request
	who   principal
	id    string
	form  url.Values
	files map[string][][]byte // multipart parts with a filename
}

type handlerFunc func(w http.ResponseWriter, r *request) error

// route is one (method, op) signature of a resource.
type route struct {
	method string
	op     string // "" for the plain CRUD verb
	access access
	h      handlerFunc
	// stream, when set, serves the route instead of h, reading the body
	// itself (uploads of any size); only plain CRUD verbs stream.
	stream http.HandlerFunc
}

type access int

const (
	authenticated access = iota
	anonymous            // no credentials needed
	adminOnly
	// rackAccess is the rack API: an enrolled rack's own credential, or
	// an administrator's key (racks that follow the region with one).
	rackAccess
)

func get(op string, a access, h handlerFunc) route {
	return route{method: http.MethodGet, op: op, access: a, h: h}
}
func post(op string, a access, h handlerFunc) route {
	return route{method: http.MethodPost, op: op, access: a, h: h}
}
func put(a access, h handlerFunc) route { return route{method: http.MethodPut, access: a, h: h} }
func del(a access, h handlerFunc) route { return route{method: http.MethodDelete, access: a, h: h} }

// resource is one of MAAS's API handlers: where it is served, under what
// name it is described, and its routes.
type resource struct {
	name string // MAAS's handler name, e.g. "MachinesHandler"
	// anon names the anonymous half, described when some route is
	// anonymous ("AnonMachinesHandler"); empty means the handler's name.
	anon string
	// path is under Prefix, with the path parameter in braces under
	// MAAS's name for it: "machines/{system_id}/".
	path string
	// aliases are other paths serving the same routes (older clients'
	// spellings); they are not described.
	aliases []string
	routes  []route
	// notFound is the model a 404 on the path names when it is not the
	// handler's ("BootSource" for a boot source's selections).
	notFound string
}

// model is MAAS's model name for the object a resource's path names
// ("Machine" for MachineHandler), which its 404s name; "" for collections.
func (res resource) model() string {
	if res.param() == "" {
		return ""
	}
	if res.notFound != "" {
		return res.notFound
	}
	return strings.TrimSuffix(res.name, "Handler")
}

// param is the resource's (first) path parameter ("system_id"), or "".
func (res resource) param() string {
	if ps := res.params(); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// params are the resource's path parameters in order: most have one; a
// boot source's selection has the source's id and its own.
func (res resource) params() []string {
	var out []string
	for rest := res.path; ; {
		_, after, ok := strings.Cut(rest, "{")
		if !ok {
			return out
		}
		name, tail, _ := strings.Cut(after, "}")
		out = append(out, name)
		rest = tail
	}
}

// actionName is MAAS's name for a route: its op, or the CRUD verb.
func (rt route) actionName() string {
	if rt.op != "" {
		return rt.op
	}
	return map[string]string{http.MethodGet: "read", http.MethodPost: "create", http.MethodPut: "update", http.MethodDelete: "delete"}[rt.method]
}

// handle registers a resource: its routes are told apart by method and op,
// as MAAS's Piston handlers are. A method the resource lacks is 405; a known
// method with an op it lacks is 400 naming the signature. Paths match
// exactly: anything below a resource is another (unknown) endpoint.
func (s *Server) handle(res resource) {
	s.resources = append(s.resources, res)
	for _, p := range append([]string{res.path}, res.aliases...) {
		for _, rt := range res.routes {
			if rt.stream != nil {
				s.mux.HandleFunc(rt.method+" "+exact(Prefix+p), s.withHash(rt.stream))
			}
		}
		s.mux.HandleFunc(exact(Prefix+p), s.withHash(s.dispatch(res)))
	}
}

// exact is a mux pattern matching p alone: a path ending in a slash
// needs {$} for that; one without already matches only itself.
func exact(p string) string {
	if strings.HasSuffix(p, "/") {
		return p + "{$}"
	}
	return p
}

// withHash sends the description's hash with every answer, as MAAS does,
// so that clients holding an older description can tell.
func (s *Server) withHash(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-MAAS-API-Hash", s.describeHash)
		h(w, r)
	}
}

func (s *Server) dispatch(res resource) http.HandlerFunc {
	routes := res.routes
	param := res.param()
	model := res.model()
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
	return func(w http.ResponseWriter, r *http.Request) {
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
		if who.anonymous() && who.rack == nil && !open[r.Method] {
			s.writeError(w, r, errUnauthorized{"credentials are required for this operation"})
			return
		}
		limit := s.opts.MaxBody
		if who.anonymous() && who.rack == nil {
			limit = min(limit, maxAnonymousBody)
		}
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, who))
		req := &request{Request: r, who: who}
		if param != "" {
			req.id = r.PathValue(param)
		}
		if err := s.parseForm(w, req, limit); err != nil {
			s.writeError(w, r, err)
			return
		}
		op := req.form.Get("op")
		var found *route
		for i := range routes {
			if routes[i].method == r.Method && routes[i].op == op && routes[i].h != nil {
				found = &routes[i]
				break
			}
		}
		if found == nil {
			writeText(w, http.StatusBadRequest, fmt.Sprintf("Unrecognised signature: method=%s op=%s", r.Method, truncate(op, 40)))
			return
		}
		switch {
		case who.rack != nil && found.access == rackAccess:
		case who.rack != nil && found.access != anonymous:
			// A rack's credential opens the rack API and nothing else.
			writeText(w, http.StatusForbidden, "A rack's credentials are only for the rack API")
			return
		case found.access != anonymous && who.anonymous():
			s.writeError(w, r, errUnauthorized{"credentials are required for this operation"})
			return
		case (found.access == adminOnly || found.access == rackAccess) && !who.user.Admin:
			writeText(w, http.StatusForbidden, "This operation needs an administrator")
			return
		}
		if err := found.h(w, req); err != nil {
			s.writeError(w, r, namedNotFound(err, model))
		}
	}
}

// maxAnonymousBody caps what a caller without credentials may send: no
// anonymous call takes more than a few parameters.
const maxAnonymousBody = 16 << 10
