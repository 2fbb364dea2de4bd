package rack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestPowerWorkRefusals: the power work API, driven as a rack would and as
// a hostile or confused one: bad input is 400, a request the caller does
// not hold 409, an unknown one 404, and none of those changes the request;
// a BMC no rack reaches is refused with 503 and the words; a request whose
// BMC the rack cannot reach is skipped, or given back untouched.
func TestPowerWorkRefusals(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { powerWorkRefusals(t, "") })
	t.Run("postgres", func(t *testing.T) { powerWorkRefusals(t, pgtest.URL(t)) })
}

func powerWorkRefusals(t *testing.T, dbURL string) {
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, DBURL: dbURL, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RackPower: serve.RackPower{Remote: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	key, err := serve.APIKey(ctx, dir, dbURL, "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://"+srv.Addr.String()+"/MAAS/", key)
	if err != nil {
		t.Fatal(err)
	}
	call := func(op string, form url.Values) (int, string) {
		t.Helper()
		b, err := cl.Do(ctx, http.MethodPost, "rack/", url.Values{"op": {op}}, form)
		var ae *client.APIError
		if asAPIError(err, &ae) {
			return ae.Status, ae.Body
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			return http.StatusNoContent, ""
		}
		return http.StatusOK, string(b)
	}
	claim := func(id string, more ...string) (int, rack.PowerWork) {
		t.Helper()
		form := url.Values{"rack_id": {id}, "networks": {"192.0.2.0/24"}, "wait": {"0.2"}}
		for i := 0; i+1 < len(more); i += 2 {
			form[more[i]] = append(form[more[i]], more[i+1])
		}
		code, body := call("power_claim", form)
		var w rack.PowerWork
		if code == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &w); err != nil {
				t.Fatal(err)
			}
		}
		return code, w
	}
	if code, _ := claim("r1"); code != http.StatusNoContent {
		t.Fatalf("empty queue: %d", code)
	}
	machine := func(name, mac, addr string) string {
		t.Helper()
		m, err := cl.CreateMachine(ctx, url.Values{"hostname": {name}, "architecture": {"amd64/generic"}, "mac_addresses": {mac},
			"power_type": {"ipmi"}, "power_parameters_power_address": {addr}, "power_parameters_power_user": {"admin"},
			"power_parameters_power_pass": {"secret-bmc-pass"}})
		if err != nil {
			t.Fatal(err)
		}
		return m.SystemID
	}

	far := machine("far", "52:54:00:78:00:01", "198.51.100.5")
	if _, err := cl.MachineOp(ctx, far, "power_on", nil); err == nil || !strings.Contains(err.Error(), "503") ||
		!strings.Contains(err.Error(), "no rack reaches BMC 198.51.100.5") {
		t.Fatalf("power on of a BMC no rack reaches: %v", err)
	}

	near := machine("near", "52:54:00:78:00:02", "192.0.2.9")
	waitFor(t, "the new BMC's query to be queued", func() bool { q, _ := srv.Service.Power.Queue(ctx, near); return len(q) == 1 })
	// A rack whose probe failed on 192.0.2.9 is given nothing for it.
	if code, w := claim("r1", "unreachable", "192.0.2.9"); code != http.StatusNoContent {
		t.Fatalf("claim skipping an unreachable BMC: %d %+v", code, w)
	}
	code, w := claim("r1")
	if code != http.StatusOK || w.SystemID != near || w.Action != "query" || w.PowerParameters["power_pass"] != "secret-bmc-pass" || w.BMC != "ipmi://192.0.2.9:623" {
		t.Fatalf("claim: %d %+v", code, w)
	}
	// Given back before anything was sent: queued again, attempt uncounted.
	if code, body := call("power_release", url.Values{"rack_id": {"r1"}, "id": {w.ID}}); code != http.StatusOK {
		t.Fatalf("release: %d %s", code, body)
	}
	if r, _ := srv.Store.GetPowerRequest(ctx, w.ID); r.State != store.PowerQueued || r.Attempts != 0 {
		t.Fatalf("released request: %+v", r)
	}
	code, w = claim("r1")
	if code != http.StatusOK || w.ID == "" {
		t.Fatalf("claim again: %d", code)
	}
	held := func() store.PowerRequest {
		r, err := srv.Store.GetPowerRequest(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := held()
	good := url.Values{"rack_id": {"r1"}, "id": {w.ID}, "state": {"on"}, "duration": {"0.05"}}
	with := func(kv ...string) url.Values {
		f := url.Values{}
		for k, v := range good {
			f[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				f.Del(kv[i])
			} else {
				f.Set(kv[i], kv[i+1])
			}
		}
		return f
	}
	for _, c := range []struct {
		op   string
		form url.Values
		code int
		says string
	}{
		{"power_claim", url.Values{"rack_id": {"r 1"}}, 400, "rack_id"},
		{"power_claim", url.Values{"rack_id": {"r1"}, "networks": {"192.0.2.0/33"}}, 400, "not a CIDR"},
		{"power_claim", url.Values{"rack_id": {"r1"}, "wait": {"600"}}, 400, "wait"},
		{"power_renew", url.Values{"rack_id": {"r2"}, "id": {w.ID}}, 409, "another rack's"},
		{"power_sent", url.Values{"rack_id": {"r2"}, "id": {w.ID}}, 409, "another rack's"},
		{"power_release", url.Values{"rack_id": {"r2"}, "id": {w.ID}}, 409, "another rack's"},
		{"power_result", with("rack_id", "r2"), 409, "another rack's"},
		{"power_renew", url.Values{"rack_id": {"r1"}, "id": {"no-such-request"}}, 404, "No PowerRequest"},
		{"power_renew", url.Values{"rack_id": {"r1"}}, 400, "id"},
		{"power_result", with("state", "sideways"), 400, "state"},
		{"power_result", with("error", "BMC said no"), 400, "error_kind"},
		{"power_result", with("error", "BMC said no", "error_kind", "gremlins"), 400, "error_kind"},
		{"power_result", with("duration", "-1"), 400, "duration"},
		// NaN compares false with both bounds.
		{"power_claim", url.Values{"rack_id": {"r1"}, "wait": {"NaN"}}, 400, "wait"},
		{"power_result", with("duration", "NaN"), 400, "duration"},
		{"power_result", with("resumed", "twice"), 400, "resumed"},
	} {
		code, body := call(c.op, c.form)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s %v: %d %s; want %d with %q", c.op, c.form, code, body, c.code, c.says)
		}
	}
	if after := held(); after != before {
		t.Fatalf("refused calls changed the request:\n%+v\n%+v", before, after)
	}
	if code, body := call("power_renew", url.Values{"rack_id": {"r1"}, "id": {w.ID}}); code != http.StatusOK || !strings.Contains(body, "lease_seconds") {
		t.Fatalf("renew: %d %s", code, body)
	}
	if code, body := call("power_result", good); code != http.StatusOK {
		t.Fatalf("result: %d %s", code, body)
	}
	if r := held(); r.State != store.PowerDone || r.ResultState != "on" || r.LeaseOwner != power.RackOwner("r1") {
		t.Fatalf("reported request: %+v", r)
	}
	m, err := srv.Store.GetMachine(ctx, near)
	if err != nil || m.PowerState != "on" {
		t.Fatalf("the machine's power state after the rack's query: %q %v", m.PowerState, err)
	}
	if code, body := call("power_result", good); code != http.StatusConflict || !strings.Contains(body, "it is done") {
		t.Fatalf("a second result: %d %s", code, body)
	}
}
