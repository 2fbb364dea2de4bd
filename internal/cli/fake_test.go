package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testKey    = "ck:tk:s3cret"
	testSecret = "s3cret"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // event times print in local time
	os.Exit(m.Run())
}

// authRE is the Authorization header a MAAS server accepts from testKey.
var authRE = regexp.MustCompile(`^OAuth oauth_version="1\.0", oauth_signature_method="PLAINTEXT", ` +
	`oauth_consumer_key="ck", oauth_token="tk", oauth_signature="%26s3cret", ` +
	`oauth_nonce="[0-9a-f]{32}", oauth_timestamp="[0-9]+"$`)

// fakeMAAS is just enough of a MAAS 2.0 server for the CLI: machines,
// their ops, whoami and events. It records every request it gets.
type fakeMAAS struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	machines []map[string]any
	events   []map[string]any      // oldest first
	requests []string              // "METHOD /path?query form"
	fail     map[string]apiFailure // op → the error to answer with instead
	watch    chan string           // SSE text to send on an open watch stream
}

func newFakeMAAS(t *testing.T) *fakeMAAS {
	f := &fakeMAAS{t: t, fail: map[string]apiFailure{}, watch: make(chan string, 10)}
	f.machines = []map[string]any{
		fakeMachine("abc123", "web01", 4, "Ready", "off", nil),
		fakeMachine("def456", "db01", 6, "Deployed", "on", "admin"),
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

type apiFailure struct {
	status int
	body   string
}

func fakeMachine(id, host string, status int, statusName, power string, owner any) map[string]any {
	nic := map[string]any{"id": 1, "name": "eth0", "type": "physical", "mac_address": "52:54:00:00:00:01",
		"enabled": true, "links": []any{map[string]any{"id": 1, "mode": "auto", "ip_address": "10.0.0.5"}}}
	return map[string]any{
		"system_id": id, "hostname": host, "fqdn": host + ".maas", "domain": map[string]any{"id": 0, "name": "maas"},
		"architecture": "amd64/generic", "status": status, "status_name": statusName, "status_message": "",
		"power_state": power, "power_type": "ipmi", "owner": owner,
		"zone":      map[string]any{"id": 1, "name": "default", "description": ""},
		"pool":      map[string]any{"id": 1, "name": "default", "description": ""},
		"cpu_count": 4, "memory": 8192, "storage": 500000.0, "tag_names": []string{"ssd", "big"},
		"interface_set": []any{nic}, "boot_interface": nic, "ip_addresses": []string{"10.0.0.5"},
		"hardware_uuid": "u-" + id, "osystem": "", "distro_series": "", "netboot": true,
		"description": "", "resource_uri": "/MAAS/api/2.0/machines/" + id + "/",
	}
}

// opResult is the status_name each op leaves a machine in.
var opResult = map[string]string{
	"commission": "Commissioning", "deploy": "Deploying", "release": "Releasing", "abort": "Ready",
	"mark_broken": "Broken", "mark_fixed": "Ready", "allocate": "Allocated",
}

func (f *fakeMAAS) serve(w http.ResponseWriter, r *http.Request) {
	if !authRE.MatchString(r.Header.Get("Authorization")) {
		f.t.Errorf("bad Authorization header %q", r.Header.Get("Authorization"))
		http.Error(w, "Authorization Error: 'Invalid access token'", http.StatusUnauthorized)
		return
	}
	r.ParseForm()
	q := r.URL.Query()
	op := q.Get("op")
	f.mu.Lock()
	f.requests = append(f.requests, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+r.PostForm.Encode()))
	fail, failing := f.fail[op]
	f.mu.Unlock()
	if failing {
		http.Error(w, fail.body, fail.status)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/MAAS/api/2.0/")
	switch {
	case path == "users/" && op == "whoami":
		f.json(w, map[string]any{"username": "admin", "email": "a@example.com", "is_superuser": true})
	case path == "events/" && op == "query":
		f.queryEvents(w, q)
	case path == "events/" && op == "watch":
		f.watchEvents(w, r)
	case path == "machines/" && r.Method == "GET":
		var out []map[string]any
		f.mu.Lock()
		for _, m := range f.machines {
			if hs := q["hostname"]; len(hs) == 0 || slices.Contains(hs, m["hostname"].(string)) {
				out = append(out, m)
			}
		}
		f.mu.Unlock()
		f.json(w, out)
	case path == "machines/" && op == "allocate":
		f.op(w, r.PostForm.Get("system_id"), "allocate")
	case path == "machines/" && r.Method == "POST":
		m := fakeMachine("new789", r.PostForm.Get("hostname"), 0, "New", "unknown", nil)
		f.mu.Lock()
		f.machines = append(f.machines, m)
		f.mu.Unlock()
		f.json(w, m)
	case strings.HasPrefix(path, "machines/"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "machines/"), "/")
		switch {
		case r.Method == "DELETE":
			if f.find(id) == nil {
				http.Error(w, "No Machine matches the given query.", http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case op == "query_power_state":
			if f.find(id) == nil {
				http.Error(w, "No Machine matches the given query.", http.StatusNotFound)
				return
			}
			f.json(w, map[string]string{"state": "on"})
		default:
			f.op(w, id, op)
		}
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeMAAS) find(id string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.machines {
		if m["system_id"] == id {
			return m
		}
	}
	return nil
}

// op answers GET machines/<id>/ (op "") and POST machines/<id>/?op=<op>.
func (f *fakeMAAS) op(w http.ResponseWriter, id, op string) {
	m := f.find(id)
	if m == nil {
		http.Error(w, "No Machine matches the given query.", http.StatusNotFound)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := opResult[op]; ok {
		m["status_name"] = s
	}
	switch op {
	case "power_on":
		m["power_state"] = "on"
	case "power_off":
		m["power_state"] = "off"
	}
	f.json(w, m)
}

func (f *fakeMAAS) queryEvents(w http.ResponseWriter, q url.Values) {
	limit := 100
	if l := q.Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	f.mu.Lock()
	var out []map[string]any
	for i := len(f.events) - 1; i >= 0 && len(out) < limit; i-- { // newest first, as MAAS
		e := f.events[i]
		if hs := q["hostname"]; len(hs) > 0 && !slices.Contains(hs, e["hostname"].(string)) {
			continue
		}
		out = append(out, e)
	}
	f.mu.Unlock()
	if out == nil {
		out = []map[string]any{}
	}
	f.json(w, map[string]any{"count": len(out), "events": out, "next_uri": "", "prev_uri": ""})
}

// watchEvents sends whatever arrives on f.watch until the client leaves.
func (f *fakeMAAS) watchEvents(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ": connected\n\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case s := <-f.watch:
			io.WriteString(w, s)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (f *fakeMAAS) json(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// addEvent appends an event to the log and returns its SSE form.
func (f *fakeMAAS) addEvent(id int64, host, level, typ, desc string) string {
	e := map[string]any{"id": id, "node": "id-" + host, "hostname": host, "username": "admin", "level": level,
		"type": typ, "description": desc, "created": time.Unix(1700000000+id*60, 0).UTC().Format(maasTime)}
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
	b, _ := json.Marshal(e)
	return fmt.Sprintf("id: %d\nevent: event\ndata: %s\n\n", id, b)
}

// waitForRequest waits until a request containing s has arrived.
func (f *fakeMAAS) waitForRequest(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		reqs := strings.Join(f.requests, "\n")
		f.mu.Unlock()
		if strings.Contains(reqs, s) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no request with %q arrived", s)
}

// takeRequests returns and forgets the requests seen so far.
func (f *fakeMAAS) takeRequests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// run executes the CLI and checks that the API key never shows.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Execute(args, &out, &errb)
	if strings.Contains(out.String()+errb.String(), testSecret) {
		t.Errorf("anvil %s printed the API key:\n%s%s", strings.Join(args, " "), out.String(), errb.String())
	}
	return out.String(), errb.String(), code
}

// loggedIn returns a fake server and a profiles file with a default
// profile for it, selected through $ANVIL_CONFIG.
func loggedIn(t *testing.T) (*fakeMAAS, string) {
	t.Helper()
	f := newFakeMAAS(t)
	path := filepath.Join(t.TempDir(), "profiles.json")
	t.Setenv("ANVIL_CONFIG", path)
	if out, errOut, code := run(t, "login", "lab", f.URL, testKey); code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	f.takeRequests()
	return f, path
}

// syncBuffer is a bytes.Buffer that a running command may write while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the buffer holds want.
func (s *syncBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for !strings.Contains(s.String(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
