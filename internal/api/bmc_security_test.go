package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/serve"
)

// listener accepts TCP connections on loopback and counts them: the
// attacker's endpoint, which must never be reached.
type listener struct {
	ln net.Listener
	mu sync.Mutex
	n  int
}

func newListener(t *testing.T) *listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.n++
			l.mu.Unlock()
			c.Close()
		}
	}()
	return l
}

func (l *listener) addr() string { return l.ln.Addr().String() }
func (l *listener) count() int   { l.mu.Lock(); defer l.mu.Unlock(); return l.n }

// giveTo makes alice the owner of a machine, as an allocation would.
func (e *env) giveTo(id, owner string) {
	e.t.Helper()
	_, err := e.srv.Store.UpdateMachine(context.Background(), id, func(m *machine.Machine) ([]machine.Event, error) {
		m.Owner, m.Status = owner, machine.Allocated
		return nil, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) powerParams(id string) map[string]string {
	e.t.Helper()
	var p map[string]string
	e.must(http.StatusOK, http.MethodGet, "machines/"+id+"/", e.admin, url.Values{"op": {"power_parameters"}}, &p)
	return p
}

// An owner cannot move its machine's BMC (the next query would send the
// stored password to the new address), change its power type, or point
// it at another machine's BMC; it may still rename and describe it.
func TestOwnerCannotRetargetTheBMC(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		attacker := newListener(t)
		m := e.addMachine("web-1", "52:54:00:bb:00:01", url.Values{"power_type": {"redfish"},
			"power_parameters_power_address": {"http://127.0.0.1:9"}, "power_parameters_power_user": {"root"},
			"power_parameters_power_pass": {"s3cret-bmc-pass"}})
		e.giveTo(m.SystemID, "alice")
		before := e.powerParams(m.SystemID)
		for name, f := range map[string]url.Values{
			"address":    {"power_parameters_power_address": {"http://" + attacker.addr()}},
			"json":       {"power_parameters": {`{"power_address":"http://` + attacker.addr() + `"}`}},
			"type":       {"power_type": {"webhook"}, "power_parameters_power_on_uri": {"http://" + attacker.addr() + "/"}},
			"zone":       {"zone": {"default"}},
			"drift":      {"drift_policy": {"warn"}},
			"keep creds": {"keep_credentials": {"true"}},
		} {
			code, body := e.call(http.MethodPut, "machines/"+m.SystemID+"/", e.user, f)
			if code != http.StatusForbidden || !strings.Contains(string(body), "administrator") {
				t.Errorf("%s: owner's PUT answered %d %s, want 403 in words", name, code, body)
			}
		}
		if after := e.powerParams(m.SystemID); after["power_address"] != before["power_address"] || after["power_pass"] != "s3cret-bmc-pass" {
			t.Errorf("power parameters changed by refused updates: %v", after)
		}
		// The owner's query goes to the real BMC, never to the attacker.
		e.call(http.MethodGet, "machines/"+m.SystemID+"/", e.user, url.Values{"op": {"query_power_state"}})
		if n := attacker.count(); n != 0 {
			t.Errorf("the attacker's listener was reached %d times", n)
		}
		var got apiMachine
		e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.user, url.Values{"hostname": {"mine"}, "description": {"rack 4"}}, &got)
		if got.Hostname != "mine" {
			t.Errorf("owner rename: %q", got.Hostname)
		}
	})
}

// Moving a BMC drops the credentials it had unless the administrator
// keeps them; a Redfish query after the move carries no password.
func TestMovedBMCDropsItsCredentials(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var mu sync.Mutex
		var auths []string
		bmc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auths = append(auths, r.Header.Get("Authorization"))
			mu.Unlock()
			http.Error(w, "no", http.StatusUnauthorized)
		}))
		t.Cleanup(bmc.Close)
		m := e.addMachine("db-1", "52:54:00:bb:00:02", url.Values{"power_type": {"redfish"},
			"power_parameters_power_address": {"http://127.0.0.1:9"}, "power_parameters_power_user": {"root"},
			"power_parameters_power_pass": {"s3cret-bmc-pass"}, "power_parameters_power_verify_tls": {"false"}})
		e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.admin, url.Values{"power_parameters_power_address": {bmc.URL}}, nil)
		p := e.powerParams(m.SystemID)
		if p["power_pass"] != "" || p["power_user"] != "" || p["power_verify_tls"] != "false" {
			t.Errorf("after a move without keep_credentials: %v", p)
		}
		e.call(http.MethodGet, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"query_power_state"}})
		mu.Lock()
		for _, a := range auths {
			if a != "" {
				t.Errorf("the moved BMC was sent credentials: %q", a)
			}
		}
		mu.Unlock()
		// Told to, the admin keeps them.
		e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.admin, url.Values{
			"power_parameters_power_pass": {"again"}, "power_parameters_power_user": {"root"}}, nil)
		e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.admin, url.Values{
			"power_parameters_power_address": {"http://127.0.0.1:10"}, "keep_credentials": {"true"}}, nil)
		if p := e.powerParams(m.SystemID); p["power_pass"] != "again" || p["power_user"] != "root" {
			t.Errorf("keep_credentials=true: %v", p)
		}
	})
}

// One BMC written another way is still the same BMC: names, case,
// trailing dots, default ports and IPv4-mapped IPv6 all collide. A 409
// names the holder to admins only.
func TestBMCAliasesCollide(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		first := e.addMachine("bmc-a", "52:54:00:bb:00:03", url.Values{"power_type": {"ipmi"},
			"power_parameters_power_address": {"127.0.0.1:7623"}, "power_parameters_power_user": {"u"}, "power_parameters_power_pass": {"p"}})
		e.addMachine("bmc-b", "52:54:00:bb:00:04", url.Values{"power_type": {"ipmi"},
			"power_parameters_power_address": {"127.0.0.1"}, "power_parameters_power_user": {"u"}, "power_parameters_power_pass": {"p"}})
		for i, addr := range []string{"localhost:7623", "LOCALHOST.:7623", "[::ffff:127.0.0.1]:7623", "127.0.0.1:623", "localhost", "[::ffff:127.0.0.1]"} {
			code, body := e.call(http.MethodPost, "machines/", e.admin, url.Values{"hostname": {"alias"}, "architecture": {"amd64/generic"},
				"mac_addresses": {"52:54:00:bb:01:0" + string(rune('0'+i))}, "power_type": {"ipmi"},
				"power_parameters_power_address": {addr}, "power_parameters_power_user": {"u"}, "power_parameters_power_pass": {"p"}})
			if code != http.StatusConflict {
				t.Errorf("%s: %d %s, want 409 (the same BMC as another machine)", addr, code, body)
			}
		}
		// Moving an existing machine onto the alias is refused too.
		other := e.addMachine("bmc-c", "52:54:00:bb:00:05", nil)
		code, body := e.call(http.MethodPut, "machines/"+other.SystemID+"/", e.admin, url.Values{"power_type": {"ipmi"},
			"power_parameters_power_address": {"localhost:7623"}, "power_parameters_power_user": {"u"}, "power_parameters_power_pass": {"p"}})
		if code != http.StatusConflict || !strings.Contains(string(body), first.SystemID) {
			t.Errorf("admin moving onto an alias: %d %s, want 409 naming %s", code, body, first.SystemID)
		}
		// An owner renaming onto another machine's hostname learns that
		// it is taken, not by which machine.
		e.giveTo(other.SystemID, "alice")
		code, body = e.call(http.MethodPut, "machines/"+other.SystemID+"/", e.user, url.Values{"hostname": {"bmc-a"}})
		if code != http.StatusConflict || strings.Contains(string(body), first.SystemID) {
			t.Errorf("owner's conflicting rename: %d %s, want 409 without the holder", code, body)
		}
	})
}

// A webhook pointed at an internal page reads nothing of it: not in the
// API's answer, not in the events, not in the log.
func TestPowerErrorsDoNotEchoBodies(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logTo := func(c *serve.Config) {
		c.Log = slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(b)
		}), nil))
	}
	e := start(t, "", logTo)
	const secret = "INTERNAL-PAGE-db_password=hunter2"
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			http.Error(w, secret, http.StatusInternalServerError)
			return
		}
		io.WriteString(w, secret)
	}))
	t.Cleanup(page.Close)
	for i, path := range []string{"/fail", "/ok"} {
		m := e.addMachine("hook"+strings.TrimPrefix(path, "/"), fmt.Sprintf("52:54:00:bb:00:1%d", i), url.Values{"power_type": {"webhook"},
			"power_parameters_power_on_uri": {page.URL + "/on"}, "power_parameters_power_off_uri": {page.URL + "/off"},
			"power_parameters_power_query_uri": {page.URL + path}})
		_, body := e.call(http.MethodGet, "machines/"+m.SystemID+"/", e.admin, url.Values{"op": {"query_power_state"}})
		if strings.Contains(string(body), "hunter2") {
			t.Errorf("%s: the query's answer quotes the page: %s", path, body)
		}
		_, evs := e.call(http.MethodGet, "events/", e.admin, url.Values{"op": {"query"}, "id": {m.SystemID}})
		if strings.Contains(string(evs), "hunter2") {
			t.Errorf("%s: the events quote the page", path)
		}
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "hunter2") {
		t.Error("the log quotes the page")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// One limit per field, whichever way it is set.
func TestDescriptionLimitOnUpdate(t *testing.T) {
	e := start(t, "")
	m := e.addMachine("long", "52:54:00:bb:00:20", nil)
	code, body := e.call(http.MethodPut, "machines/"+m.SystemID+"/", e.admin, url.Values{"description": {strings.Repeat("d", 900<<10)}})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "description") {
		t.Errorf("900 KiB description: %d %.200s, want 400 naming the field", code, body)
	}
	e.must(http.StatusOK, http.MethodPut, "machines/"+m.SystemID+"/", e.admin, url.Values{"description": {strings.Repeat("d", machine.MaxDescription)}}, nil)
}

// A query string net/url cannot take in full is refused, not dropped: a
// filtered list must never answer every machine.
func TestOversizedQueryIsRefused(t *testing.T) {
	e := start(t, "")
	e.addMachine("one", "52:54:00:bb:00:30", nil)
	e.addMachine("two", "52:54:00:bb:00:31", nil)
	q := url.Values{"hostname": {"one"}}
	for i := 0; i < 10001; i++ {
		q.Add("zz", "x")
	}
	code, body := e.call(http.MethodGet, "machines/", e.admin, q)
	if code != http.StatusBadRequest {
		t.Errorf("10,002 query parameters: %d %.200s, want 400", code, body)
	}
	code, body = e.call(http.MethodGet, "machines/?hostname=one&bad=%zz", e.admin, nil)
	if code != http.StatusBadRequest {
		t.Errorf("a bad escape: %d %.200s, want 400", code, body)
	}
}

// A signal the machine's phase does not take is the environment's
// mistake: 409 in words, the machine unchanged.
func TestSignalOutOfPhaseIsAConflict(t *testing.T) {
	e := start(t, "")
	ctx := t.Context()
	m, token := e.commissioning("phase", "52:54:00:bb:00:40")
	if err := e.agent(token).Signal(ctx, agentapi.StatusInstalled, "", nil); !isStatus(err, http.StatusConflict) {
		t.Errorf("INSTALLED while commissioning: %v, want 409", err)
	}
	if got := e.machine(m.SystemID).StatusName; got != "Commissioning" {
		t.Errorf("status after the refused signal: %s", got)
	}
}
