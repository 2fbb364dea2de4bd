package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/api"
)

type descAction struct {
	Doc     string  `json:"doc"`
	Method  string  `json:"method"`
	Name    string  `json:"name"`
	Op      *string `json:"op"`
	Restful bool    `json:"restful"`
}

type descHandler struct {
	Actions []descAction `json:"actions"`
	Doc     string       `json:"doc"`
	Name    string       `json:"name"`
	Params  []string     `json:"params"`
	Path    string       `json:"path"`
	URI     string       `json:"uri"`
}

type descResource struct {
	Anon *descHandler `json:"anon"`
	Auth *descHandler `json:"auth"`
	Name string       `json:"name"`
}

type apiDesc struct {
	Doc       string         `json:"doc"`
	Hash      string         `json:"hash"`
	Handlers  []descHandler  `json:"handlers"`
	Resources []descResource `json:"resources"`
}

// describe fetches describe/ as maascli's fetch_api_description does: no
// credentials, and exactly application/json or it gives up.
func (e *env) describe() apiDesc {
	e.t.Helper()
	resp, err := http.Get(e.base + "api/2.0/describe/")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		e.t.Fatalf("describe/: %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var d apiDesc
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		e.t.Fatalf("describe/: %v", err)
	}
	if h := resp.Header.Get("X-MAAS-API-Hash"); h != d.Hash {
		e.t.Fatalf("describe/ hash %q, header %q", d.Hash, h)
	}
	return d
}

// camel is maascli's re_camelcase (Go's greedy match ends where its
// lookahead would).
var camel = regexp.MustCompile(`[A-Z]*[a-z0-9]+|[A-Z]+`)

// commandName is maascli's handler_command_name.
func commandName(handler string) string {
	var parts []string
	for _, p := range camel.FindAllString(handler, -1) {
		if p = strings.ToLower(p); p != "handler" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-")
}

// cliCommand is what maascli's register_resources builds for a resource
// on a profile with credentials.
type cliCommand struct {
	name    string
	path    string
	params  []string
	actions []descAction
}

func cliTree(t *testing.T, d apiDesc) map[string]cliCommand {
	t.Helper()
	tree := map[string]cliCommand{}
	for _, res := range d.Resources {
		seen := map[string]bool{}
		var actions []descAction
		for _, h := range []*descHandler{res.Auth, res.Anon} {
			if h == nil {
				continue
			}
			for _, a := range h.Actions {
				if !seen[a.Name] {
					seen[a.Name] = true
					actions = append(actions, a)
				}
			}
		}
		if len(actions) == 0 {
			continue
		}
		h := res.Auth
		if h == nil {
			h = res.Anon
		}
		// The CLI's handler definition takes the actions of the half it
		// represents the resource by.
		c := cliCommand{name: commandName(res.Name), path: h.Path, params: h.Params, actions: h.Actions}
		if _, dup := tree[c.name]; dup {
			t.Fatalf("two resources make the command %q", c.name)
		}
		tree[c.name] = c
	}
	return tree
}

// TestDescribe walks describe/ as the maas CLI and python-libmaas do and
// calls every action it finds: each is served, and every route the server
// has is described.
func TestDescribe(t *testing.T) {
	e := start(t, "")
	if p := api.DocProblems(api.New(e.srv.Service, slog.New(slog.DiscardHandler), api.Options{})); len(p) > 0 {
		t.Fatalf("the route table and its docs disagree:\n%s", strings.Join(p, "\n"))
	}
	before, after := api.HashAfterDocChange(api.New(e.srv.Service, slog.New(slog.DiscardHandler), api.Options{}))
	if len(before) != 40 || before == after {
		t.Fatalf("hash %q does not change with a doc (%q)", before, after)
	}

	d := e.describe()
	if d.Doc != "MAAS API" || len(d.Hash) != 40 {
		t.Fatalf("describe/: doc %q hash %q", d.Doc, d.Hash)
	}
	host := strings.TrimSuffix(e.base, "/MAAS/")
	nHalves := 0
	libmaas := map[string]bool{}
	for _, res := range d.Resources {
		if res.Auth == nil && res.Anon == nil {
			t.Errorf("%s: neither half", res.Name)
		}
		for _, h := range []*descHandler{res.Anon, res.Auth} {
			if h == nil {
				continue
			}
			nHalves++
			if h.Doc == "" || !strings.HasPrefix(h.Path, "/MAAS/api/2.0/") || h.URI != host+h.Path || h.Params == nil {
				t.Errorf("%s: doc %q path %q uri %q params %v", h.Name, h.Doc, h.Path, h.URI, h.Params)
			}
			for _, p := range h.Params {
				if !strings.Contains(h.Path, "{"+p+"}") {
					t.Errorf("%s: param %s not in %s", h.Name, p, h.Path)
				}
			}
			if !sort.SliceIsSorted(h.Actions, func(i, j int) bool { return h.Actions[i].Name < h.Actions[j].Name }) {
				t.Errorf("%s: actions not sorted by name", h.Name)
			}
			for _, a := range h.Actions {
				if a.Doc == "" || a.Restful != (a.Op == nil) || a.Op != nil && *a.Op != a.Name {
					t.Errorf("%s %s: %+v", h.Name, a.Name, a)
				}
			}
		}
		// python-libmaas names a resource after its handler, without
		// Anon and Handler, and sets it on the session: two alike would
		// hide one.
		n := strings.TrimSuffix(strings.TrimPrefix(res.Name, "Anon"), "Handler")
		if libmaas[n] {
			t.Errorf("python-libmaas would see %s twice", n)
		}
		libmaas[n] = true
	}
	if len(d.Handlers) != nHalves {
		t.Errorf("handlers lists %d halves, resources have %d", len(d.Handlers), nHalves)
	}

	tree := cliTree(t, d)
	for _, want := range []string{"machines", "machine", "nodes", "node", "zones", "zone", "users", "user", "version", "maas", "boot-resources", "resource-pools", "sshkeys", "tags", "events", "subnets", "ipranges"} {
		if _, ok := tree[want]; !ok {
			t.Errorf("the CLI has no %q command", want)
		}
	}
	calls := 0
	for _, c := range tree {
		for _, a := range c.actions {
			calls++
			e.walkAction(c, a)
		}
	}
	if calls < 70 {
		t.Fatalf("walked %d actions, expected the 70 or more Anvil has", calls)
	}
}

// walkAction calls one action as the CLI would with no arguments (path
// parameters of something that does not exist), and fails when the
// server does not have it.
func (e *env) walkAction(c cliCommand, a descAction) {
	e.t.Helper()
	path := strings.TrimPrefix(c.path, "/MAAS/api/2.0/")
	for _, p := range c.params {
		path = strings.ReplaceAll(path, "{"+p+"}", "nosuch")
	}
	if a.Op != nil {
		path += "?op=" + *a.Op
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, a.Method, e.base+"api/2.0/"+path, nil)
	req.Header.Set("Authorization", cliOAuth(e.admin))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Errorf("%s %s: %v", c.name, a.Name, err)
		return
	}
	// Streams (events watch, the rack's boot stream) are served once
	// their headers are; the body is not waited for.
	var b []byte
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		b, _ = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	body := string(b)
	switch {
	case resp.StatusCode == 405, resp.StatusCode == 404 && strings.Contains(body, "Unknown API endpoint"),
		resp.StatusCode == 400 && strings.Contains(body, "Unrecognised signature"), resp.StatusCode == 401:
		e.t.Errorf("maas PROFILE %s %s (%s %s): not served: %d %s", c.name, a.Name, a.Method, path, resp.StatusCode, body)
	case resp.Header.Get("Content-Type") == "":
		e.t.Errorf("maas PROFILE %s %s: %d without a Content-Type", c.name, a.Name, resp.StatusCode)
	case resp.Header.Get("X-MAAS-API-Hash") == "":
		e.t.Errorf("maas PROFILE %s %s: no X-MAAS-API-Hash", c.name, a.Name)
	}
}
