package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// env is a real Anvil server on a loopback port with an admin and a
// non-admin user.
type env struct {
	t        *testing.T
	srv      *serve.Server
	base     string // http://127.0.0.1:port/MAAS/
	admin    string // API keys
	user     string
	dataDir  string
	dbURL    string
	shutdown func()
}

type option func(*serve.Config)

func withTimeout(status, monitor time.Duration) option {
	return func(c *serve.Config) { c.StatusTimeout, c.MonitorInterval = status, monitor }
}

// withPowerMonitor polls every interval and treats disagreeing readings
// as drift after grace.
func withPowerMonitor(interval, grace time.Duration) option {
	return func(c *serve.Config) {
		c.Monitor.Interval, c.Monitor.Tick, c.Monitor.Refresh = interval, interval/10, interval/2
		c.DriftGrace = grace
		c.Power.QueryTimeout = 5 * time.Second // generous: CI machines are loaded
	}
}

// eachDB runs fn against SQLite and, when available, PostgreSQL.
func eachDB(t *testing.T, fn func(t *testing.T, e *env), opts ...option) {
	t.Run("sqlite", func(t *testing.T) { fn(t, start(t, "", opts...)) })
	t.Run("postgres", func(t *testing.T) {
		fn(t, start(t, pgtest.URL(t), opts...))
	})
}

func start(t *testing.T, dbURL string, opts ...option) *env {
	t.Helper()
	cfg := serve.Config{
		DataDir: t.TempDir(), DBURL: dbURL, Listen: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	ctx := context.Background()
	srv, err := serve.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	e := &env{t: t, srv: srv, base: "http://" + srv.Addr.String() + "/MAAS/", dataDir: cfg.DataDir, dbURL: dbURL}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	if e.admin, err = serve.APIKey(ctx, cfg.DataDir, dbURL, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Store.EnsureUser(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	tok, err := srv.Store.CreateToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	e.user = tok.APIKey()
	return e
}

// oauth builds MAAS's PLAINTEXT Authorization header for a key.
func oauth(key string) string {
	p := strings.SplitN(key, ":", 3)
	return `OAuth oauth_version="1.0", oauth_signature_method="PLAINTEXT", oauth_consumer_key="` + p[0] +
		`", oauth_token="` + p[1] + `", oauth_signature="&` + p[2] + `", oauth_nonce="n", oauth_timestamp="1"`
}

// call sends one request; form goes in the body for POST and PUT, in the
// query otherwise. key "" is anonymous.
func (e *env) call(method, path, key string, form url.Values) (int, []byte) {
	e.t.Helper()
	u := e.base + "api/2.0/" + path
	var body io.Reader
	if method == http.MethodPost || method == http.MethodPut {
		body = strings.NewReader(form.Encode())
	} else if len(form) > 0 {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + form.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "" {
		req.Header.Set("Authorization", oauth(key))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// must calls and fails the test unless the status is want; it decodes
// the JSON answer into out when out is non-nil.
func (e *env) must(want int, method, path, key string, form url.Values, out any) {
	e.t.Helper()
	code, b := e.call(method, path, key, form)
	if code != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

type apiMachine struct {
	SystemID     string  `json:"system_id"`
	Hostname     string  `json:"hostname"`
	Status       int     `json:"status"`
	StatusName   string  `json:"status_name"`
	StatusMsg    string  `json:"status_message"`
	Owner        *string `json:"owner"`
	PowerType    string  `json:"power_type"`
	PowerState   string  `json:"power_state"`
	Architecture string  `json:"architecture"`
	Zone         struct {
		Name string `json:"name"`
	} `json:"zone"`
	Pool struct {
		Name string `json:"name"`
	} `json:"pool"`
	Interfaces []struct {
		MAC string `json:"mac_address"`
	} `json:"interface_set"`
	TagNames []string          `json:"tag_names"`
	Params   map[string]string `json:"power_parameters"`
	Drift    bool              `json:"power_drift"`
	Reason   string            `json:"power_drift_reason"`
	Observed string            `json:"power_state_observed"`
}

func (m apiMachine) PowerDriftFlag() bool    { return m.Drift }
func (m apiMachine) DriftReason(*env) string { return m.Reason }

// addMachine creates a machine with one MAC through the API.
func (e *env) addMachine(hostname, mac string, extra url.Values) apiMachine {
	e.t.Helper()
	f := url.Values{"hostname": {hostname}, "mac_addresses": {mac}, "architecture": {"amd64/generic"}}
	for k, v := range extra {
		f[k] = v
	}
	var m apiMachine
	e.must(http.StatusOK, http.MethodPost, "machines/", e.admin, f, &m)
	return m
}

func (e *env) machine(id string) apiMachine {
	e.t.Helper()
	var m apiMachine
	e.must(http.StatusOK, http.MethodGet, "machines/"+id+"/", e.admin, nil, &m)
	return m
}

func (e *env) countMachines() int {
	e.t.Helper()
	n, err := e.srv.Store.CountMachines(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// waitStatus polls until the machine reaches the status name.
func (e *env) waitStatus(id, status string) apiMachine {
	e.t.Helper()
	return e.waitStatusWithin(id, status, 10*time.Second)
}

func (e *env) waitStatusWithin(id, status string, d time.Duration) apiMachine {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for {
		m := e.machine(id)
		if m.StatusName == status {
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("machine %s is %q, want %q (%s)", id, m.StatusName, status, m.StatusMsg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// watchEvents opens the admin's event stream (events/?op=watch) for as
// long as ctx lasts.
func (e *env) watchEvents(ctx context.Context) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"api/2.0/events/?op=watch", nil)
	req.Header.Set("Authorization", oauth(e.admin))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}
