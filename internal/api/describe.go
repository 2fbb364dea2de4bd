package api

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
)

// describe/ is generated from the route table, in the shape MAAS's
// doc_handler answers: the maas CLI builds its commands from it (one per
// resource, named after the handler, one sub-command per action, taking
// key=value arguments when the action's doc has ":param" lines) and
// python-libmaas its client. Fields are declared in the order MAAS sorts
// its keys.

type apiDescription struct {
	Doc       string          `json:"doc"`
	Handlers  []*handlerDesc  `json:"handlers"`
	Hash      string          `json:"hash"`
	Resources []resourceDescr `json:"resources"`
}

type resourceDescr struct {
	Anon *handlerDesc `json:"anon"`
	Auth *handlerDesc `json:"auth"`
	Name string       `json:"name"`
}

type handlerDesc struct {
	Actions []actionDesc `json:"actions"`
	Doc     string       `json:"doc"`
	Name    string       `json:"name"`
	Params  []string     `json:"params"`
	Path    string       `json:"path"`
	URI     string       `json:"uri,omitempty"`
}

type actionDesc struct {
	Doc     string  `json:"doc"`
	Method  string  `json:"method"`
	Name    string  `json:"name"`
	Op      *string `json:"op"`
	Restful bool    `json:"restful"`
}

// description is the API's description without URIs (they depend on how
// a client reached the server); base, when not empty, adds them.
func (s *Server) description(base string) apiDescription {
	d := apiDescription{Doc: "MAAS API", Hash: s.describeHash}
	var anons, auths []*handlerDesc
	for _, res := range s.resources {
		rd := resourceDescr{Name: res.name}
		var open []route
		for _, rt := range res.routes {
			if rt.access == anonymous {
				open = append(open, rt)
			}
		}
		switch {
		case len(open) == len(res.routes):
			// Nothing needs credentials: MAAS describes such a resource
			// (version/) by its anonymous half alone.
			rd.Anon = handlerOf(res, res.name, res.routes, base)
		default:
			rd.Auth = handlerOf(res, res.name, res.routes, base)
			if len(open) > 0 {
				rd.Anon = handlerOf(res, res.anon, open, base)
			}
		}
		if rd.Anon != nil {
			anons = append(anons, rd.Anon)
		}
		if rd.Auth != nil {
			auths = append(auths, rd.Auth)
		}
		d.Resources = append(d.Resources, rd)
	}
	sort.Slice(d.Resources, func(i, j int) bool { return d.Resources[i].Name < d.Resources[j].Name })
	// "handlers" repeats every half, anonymous ones first, for clients of
	// MAAS's older description.
	d.Handlers = append(anons, auths...)
	return d
}

func handlerOf(res resource, name string, routes []route, base string) *handlerDesc {
	h := &handlerDesc{Name: name, Doc: docs[res.name], Params: []string{}, Path: Prefix + res.path}
	if base != "" {
		h.URI = base + h.Path
	}
	if ps := res.params(); len(ps) > 0 {
		h.Params = ps
	}
	for _, rt := range routes {
		a := actionDesc{Method: rt.method, Name: rt.actionName(), Doc: docs[res.name+" "+rt.actionName()], Restful: rt.op == ""}
		if rt.op != "" {
			op := rt.op
			a.Op = &op
		}
		h.Actions = append(h.Actions, a)
	}
	sort.Slice(h.Actions, func(i, j int) bool { return h.Actions[i].Name < h.Actions[j].Name })
	return h
}

// descriptionHash is what X-MAAS-API-Hash carries: it changes whenever a
// resource, action or doc does.
func (s *Server) descriptionHash() string {
	d := s.description("")
	d.Hash = ""
	b, err := json.Marshal(d)
	if err != nil {
		panic("describe: " + err.Error()) // plain structs of strings: cannot fail
	}
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// describe answers GET describe/ with absolute URIs on the scheme and
// host the client used, as MAAS does. It needs no credentials: a client
// fetches it before it has a profile.
func (s *Server) describe(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("X-MAAS-API-Hash", s.describeHash)
	writeJSON(w, http.StatusOK, s.description(scheme+"://"+r.Host))
}

// docProblems lists routes without a doc and docs without a route: the
// description and the table must not drift apart.
func (s *Server) docProblems() []string {
	var out []string
	used := map[string]bool{}
	for _, res := range s.resources {
		for _, key := range append([]string{res.name}, actionKeys(res)...) {
			if used[key] {
				out = append(out, "described twice: "+key)
			}
			used[key] = true
			if docs[key] == "" {
				out = append(out, "no doc: "+key)
			}
		}
	}
	for key := range docs {
		if !used[key] {
			out = append(out, "doc of nothing served: "+key)
		}
	}
	sort.Strings(out)
	return out
}

func actionKeys(res resource) []string {
	var out []string
	for _, rt := range res.routes {
		out = append(out, res.name+" "+rt.actionName())
	}
	return out
}
