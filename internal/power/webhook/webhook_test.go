package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/webhook"
)

const (
	user  = "plug"
	pass  = "pl4g-Secret"
	token = "tok-0123456789"
)

// plug is a fake smart-plug service: POST /on, POST /off, GET /status.
type plug struct {
	mu     sync.Mutex
	on     bool
	calls  []string
	status string // overrides the answer to /status when set
	code   int    // answers every request with this status when set
	hang   bool
	auth   func(*http.Request) bool
}

func (p *plug) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.calls = append(p.calls, r.Method+" "+r.URL.Path)
	hang, code, status, auth := p.hang, p.code, p.status, p.auth
	p.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	if auth != nil && !auth(r) {
		http.Error(w, "who are you", http.StatusUnauthorized)
		return
	}
	if code != 0 {
		http.Error(w, "plug says no", code)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.Method + " " + r.URL.Path {
	case "POST /on":
		p.on = true
	case "POST /off":
		p.on = false
	case "GET /status":
		switch {
		case status != "":
			w.Write([]byte(status))
		case p.on:
			w.Write([]byte(`{"Status": "Running"}`))
		default:
			w.Write([]byte(`{"Status": "Stopped"}`))
		}
	default:
		http.NotFound(w, r)
	}
}

func (p *plug) set(f func(*plug)) {
	p.mu.Lock()
	f(p)
	p.mu.Unlock()
}

func (p *plug) history() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func serve(t *testing.T, p *plug) map[string]string {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return params(srv.URL)
}

func params(base string) map[string]string {
	return map[string]string{
		"power_on_uri": base + "/on", "power_off_uri": base + "/off", "power_query_uri": base + "/status",
		"power_user": user, "power_pass": pass,
	}
}

func with(p map[string]string, kv ...string) map[string]string {
	q := map[string]string{}
	for k, v := range p {
		q[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q[kv[i]] = kv[i+1]
	}
	return q
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantKind(t *testing.T, err error, kind power.Kind, says ...string) {
	t.Helper()
	var pe *power.Error
	if !errors.As(err, &pe) || pe.Kind != kind {
		t.Fatalf("error %v: want kind %q", err, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), token) {
		t.Errorf("error %q contains a secret", err)
	}
}

func query(t *testing.T, d webhook.Driver, p map[string]string) machine.PowerState {
	t.Helper()
	st, err := d.Query(ctx(t), p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestBasicAuthAndDefaultRegexes(t *testing.T) {
	pl := &plug{auth: func(r *http.Request) bool { u, pw, ok := r.BasicAuth(); return ok && u == user && pw == pass }}
	p := serve(t, pl)
	d := webhook.Driver{CyclePause: time.Millisecond}
	if st := query(t, d, p); st != machine.PowerOff {
		t.Fatalf("query: %s", st)
	}
	if err := d.PowerOn(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	if st := query(t, d, p); st != machine.PowerOn { // "Running" matches case-insensitively
		t.Fatalf("query: %s", st)
	}
	if err := d.PowerCycle(ctx(t), p); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerOff(ctx(t), p, false); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /status", "POST /on", "GET /status", "POST /off", "POST /on", "POST /off"}
	if got := pl.history(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	wantKind(t, d.PowerOff(ctx(t), with(p, "power_pass", "wrong"), false), power.AuthRefused, "401")
}

func TestBearerToken(t *testing.T) {
	pl := &plug{auth: func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }}
	p := serve(t, pl)
	// The token wins over user and password, as in MAAS.
	if err := (webhook.Driver{}).PowerOn(ctx(t), with(p, "power_token", token)); err != nil {
		t.Fatal(err)
	}
	wantKind(t, webhook.Driver{}.PowerOn(ctx(t), p), power.AuthRefused, "401")
}

func TestCustomRegexesAndNoMatch(t *testing.T) {
	pl := &plug{status: "relay=ON load=12W"}
	p := serve(t, pl)
	custom := with(p, "power_on_regex", `relay=on\b`, "power_off_regex", `relay=off\b`)
	if st := query(t, webhook.Driver{}, custom); st != machine.PowerOn {
		t.Errorf("custom regex: %s", st)
	}
	st, err := webhook.Driver{}.Query(ctx(t), p)
	if st != machine.PowerUnknown {
		t.Errorf("no match: %s", st)
	}
	wantKind(t, err, power.BMCError, "power_on_regex", "`status.*\\:.*running`", "power_off_regex", "17 bytes")
	if strings.Contains(err.Error(), "relay=ON") {
		t.Errorf("the error quotes the answer: %v", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	pl := &plug{}
	p := serve(t, pl)
	d := webhook.Driver{}
	for code, kind := range map[int]power.Kind{
		500: power.BMCError, 503: power.BMCError, 403: power.AuthRefused, 405: power.Unsupported, 404: power.BMCError,
	} {
		pl.set(func(pl *plug) { pl.code = code })
		err := d.PowerOn(ctx(t), p)
		wantKind(t, err, kind, "/on", fmt.Sprint(code))
		// A power URL may point at any page: its body is never echoed.
		if strings.Contains(err.Error(), "plug says no") {
			t.Errorf("the error quotes the answer: %v", err)
		}
	}
	// A 404 is retried with a trailing slash, as MAAS does.
	pl.set(func(pl *plug) { pl.code, pl.calls = 0, nil })
	err := d.PowerOn(ctx(t), with(p, "power_on_uri", strings.TrimSuffix(p["power_on_uri"], "/on")+"/nowhere"))
	wantKind(t, err, power.BMCError, "404")
	if got, want := pl.history(), []string{"POST /nowhere", "POST /nowhere/"}; !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestTimeoutAndUnreachable(t *testing.T) {
	pl := &plug{hang: true}
	p := serve(t, pl)
	c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := webhook.Driver{}.Query(c, p)
	wantKind(t, err, power.Timeout, "/status")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(DeadlineExceeded) false for %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	wantKind(t, webhook.Driver{}.PowerOn(ctx(t), params("http://"+addr)), power.Unreachable, addr, "refused")
}

func TestTLSVerification(t *testing.T) {
	srv := httptest.NewUnstartedServer(&plug{})
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	p := params(srv.URL)
	_, err := webhook.Driver{}.Query(ctx(t), p)
	wantKind(t, err, power.BadParams, "certificate", "power_verify_ssl=n")
	if st := query(t, webhook.Driver{}, with(p, "power_verify_ssl", "n")); st != machine.PowerOff {
		t.Errorf("query: %s", st)
	}
}

func TestUnsupported(t *testing.T) {
	p := serve(t, &plug{})
	d := webhook.Driver{}
	for _, err := range []error{
		d.SetBootDevice(ctx(t), p, power.BootDevice{Device: "network"}),
		d.PowerOff(ctx(t), p, true),
		func() error { _, err := d.Query(ctx(t), with(p, "power_query_uri", "")); return err }(),
	} {
		if !errors.Is(err, power.ErrUnsupported) {
			t.Errorf("%v: not ErrUnsupported", err)
		}
	}
}

func TestValidateAndBMC(t *testing.T) {
	ok := params("https://Plugs.example:8443/api")
	d := webhook.Driver{}
	if err := d.Validate(ok); err != nil {
		t.Fatal(err)
	}
	b, err := d.BMC(ok)
	if err != nil || b.Type != "webhook" || b.Address != "https://plugs.example:8443" || b.System != "/api/status" {
		t.Errorf("BMC %+v, %v", b, err)
	}
	b, _ = d.BMC(with(ok, "power_query_uri", ""))
	if b.Address != "https://plugs.example:8443" || b.System != "/api/on" {
		t.Errorf("BMC without query URI %+v", b)
	}
	for _, c := range []struct{ k, v, says string }{
		{"power_on_uri", "", "power_on_uri is required"},
		{"power_off_uri", "ftp://plug/off", "http:// or https://"},
		{"power_query_uri", "https://u:" + pass + "@plug/status", "credentials"},
		{"power_on_regex", `(?=running)`, "power_on_regex"},
		{"power_off_regex", `stopped(`, "does not compile"},
		{"power_verify_ssl", "maybe", "y or n"},
		{"power_verify_tls", "false", "unknown power parameters power_verify_tls"},
	} {
		err := d.Validate(with(ok, c.k, c.v))
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s=%q: %v, want an error saying %q", c.k, c.v, err, c.says)
		} else if strings.Contains(err.Error(), pass) {
			t.Errorf("error %q contains the password", err)
		}
	}
}
