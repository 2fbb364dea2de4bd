package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

type fakePower struct {
	mu      sync.Mutex
	actions []string
}

func (p *fakePower) PowerOff() error { p.record("poweroff"); return nil }
func (p *fakePower) Reboot() error   { p.record("reboot"); return nil }
func (p *fakePower) record(s string) { p.mu.Lock(); p.actions = append(p.actions, s); p.mu.Unlock() }
func (p *fakePower) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.actions...)
}

type fakeSystem struct{}

var testIdentity = agentapi.Identity{MACs: []string{"52:54:00:00:00:01"}, BootMAC: "52:54:00:00:00:01", UUID: "u-1", Arch: "amd64/generic", Firmware: "bios"}

func (fakeSystem) Identity(context.Context) agentapi.Identity { return testIdentity }
func (fakeSystem) Inventory(context.Context) (*machine.Inventory, map[string][]byte) {
	time.Sleep(30 * time.Millisecond) // long enough for a heartbeat or two
	return CollectInventory(fixture), RawFiles(fixture)
}

// signal is one op=signal the fake region received.
type signal struct {
	Status, Error, Auth string
	Files               map[string][]byte
}

// region is a fake metadata API: answers are queued per path; an answer
// with code != 0 is sent as that status.
type region struct {
	t       *testing.T
	mu      sync.Mutex
	answers map[string][]answer
	hellos  []agentapi.HelloRequest
	enlists []agentapi.EnlistRequest
	signals []signal
}

type answer struct {
	code int
	resp agentapi.HelloResponse
}

func (r *region) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := strings.TrimPrefix(req.URL.Path, "/MAAS/metadata/")
	if p == agentapi.MetadataPath {
		if err := req.ParseMultipartForm(1 << 20); err != nil {
			r.t.Errorf("signal: %v", err)
		}
		s := signal{Status: req.FormValue("status"), Error: req.FormValue("error"), Auth: req.Header.Get("Authorization"), Files: map[string][]byte{}}
		if req.MultipartForm != nil {
			for name, fhs := range req.MultipartForm.File {
				f, _ := fhs[0].Open()
				var b bytes.Buffer
				b.ReadFrom(f)
				s.Files[name] = b.Bytes()
			}
		}
		r.signals = append(r.signals, s)
		if q := r.answers[p]; len(q) > 0 {
			r.answers[p] = q[1:]
			if q[0].code != 0 {
				http.Error(w, "busy", q[0].code)
			}
		}
		return
	}
	switch p {
	case agentapi.HelloPath:
		var h agentapi.HelloRequest
		json.NewDecoder(req.Body).Decode(&h)
		r.hellos = append(r.hellos, h)
	case agentapi.EnlistPath:
		var e agentapi.EnlistRequest
		json.NewDecoder(req.Body).Decode(&e)
		r.enlists = append(r.enlists, e)
	default:
		http.NotFound(w, req)
		return
	}
	q := r.answers[p]
	if len(q) == 0 {
		r.t.Errorf("no answer queued for %s", p)
		http.Error(w, "no answer", 500)
		return
	}
	r.answers[p] = q[1:]
	if q[0].code != 0 {
		w.WriteHeader(q[0].code)
		json.NewEncoder(w).Encode(agentapi.Error{Error: "try later"})
		return
	}
	json.NewEncoder(w).Encode(q[0].resp)
}

func runAgent(t *testing.T, answers map[string][]answer, tweak func(*Agent)) (*region, *fakePower, string) {
	t.Helper()
	reg := &region{t: t, answers: answers}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	var console bytes.Buffer
	power := &fakePower{}
	a := &Agent{
		Cmdline: Cmdline{URL: srv.URL + "/MAAS/metadata/", Purpose: PurposeEnlist, Enrol: "enrol-secret", Heartbeat: 10 * time.Millisecond},
		Client:  &agentapi.Client{Base: srv.URL + "/MAAS/metadata/"},
		Sys:     fakeSystem{}, Power: power, Console: &syncWriter{w: &console},
		Backoff: time.Millisecond, RetryFor: 5 * time.Second, BMCResetWait: 20 * time.Millisecond,
	}
	if tweak != nil {
		tweak(a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Run(ctx)
	out := console.String()
	for _, secret := range []string{"enrol-secret", "tok:en:secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("console shows a secret:\n%s", out)
		}
	}
	t.Logf("console:\n%s", out)
	return reg, power, out
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestEnlistThenPowerOff(t *testing.T) {
	reg, power, out := runAgent(t, map[string][]answer{
		agentapi.HelloPath:  {{resp: agentapi.HelloResponse{Action: agentapi.ActionEnlist}}},
		agentapi.EnlistPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionPowerOff, SystemID: "abc123"}}},
	}, nil)
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power actions %v", got)
	}
	if len(reg.hellos) != 1 || reg.hellos[0].Enrol != "enrol-secret" || reg.hellos[0].Purpose != "enlist" || reg.hellos[0].UUID != "u-1" {
		t.Fatalf("hellos %+v", reg.hellos)
	}
	if len(reg.enlists) != 1 || reg.enlists[0].Inventory == nil || reg.enlists[0].Inventory.CPU.Threads != 8 || reg.enlists[0].MACs[0] != "52:54:00:00:00:01" {
		t.Fatalf("enlists %+v", reg.enlists)
	}
	for _, want := range []string{"anvil-agent: hello action=enlist", "anvil-agent: enlist action=poweroff system_id=abc123", "anvil-agent: stage hello=", "anvil-agent: powering off"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q", want)
		}
	}
}

func TestProceedCommissioning(t *testing.T) {
	reg, power, out := runAgent(t, map[string][]answer{
		agentapi.HelloPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, SystemID: "abc123", Phase: agentapi.PhaseCommissioning, Token: "tok:en:secret"}}},
	}, nil)
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power actions %v", got)
	}
	if len(reg.signals) < 2 {
		t.Fatalf("signals %v", statuses(reg.signals))
	}
	last := reg.signals[len(reg.signals)-1]
	for _, s := range reg.signals[:len(reg.signals)-1] {
		if s.Status != agentapi.StatusWorking {
			t.Errorf("heartbeat status %q", s.Status)
		}
	}
	if last.Status != agentapi.StatusOK || !strings.Contains(last.Auth, `oauth_token="en"`) {
		t.Fatalf("last signal %+v", last)
	}
	var inv machine.Inventory
	if err := json.Unmarshal(last.Files[agentapi.InventoryFile], &inv); err != nil || inv.MemoryMiB != 15933 || len(inv.Disks) != 3 {
		t.Fatalf("inventory file: %v %+v", err, inv)
	}
	for _, f := range []string{"cpuinfo", "meminfo", "dmi-id", "block-devices", "net-devices"} {
		if len(last.Files[f]) == 0 {
			t.Errorf("no raw file %s", f)
		}
	}
	if !strings.Contains(out, "stage hello=") || !strings.Contains(out, "inventory=") || !strings.Contains(out, "signal=") {
		t.Errorf("no stage line")
	}
}

func TestUnsupportedPhaseFails(t *testing.T) {
	reg, power, _ := runAgent(t, map[string][]answer{
		agentapi.HelloPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: "firmware_update", Token: "tok:en:secret"}}},
	}, nil)
	if len(reg.signals) != 1 || reg.signals[0].Status != agentapi.StatusFailed || reg.signals[0].Error != "the ephemeral environment cannot run phase firmware_update yet" {
		t.Fatalf("signals %v", statuses(reg.signals))
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power actions %v", got)
	}
}

func TestReboot(t *testing.T) {
	for _, wait := range []bool{false, true} {
		start := time.Now()
		_, power, _ := runAgent(t, map[string][]answer{
			agentapi.HelloPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionReboot, WaitForBMC: wait}}},
		}, nil)
		if got := power.get(); len(got) != 1 || got[0] != "reboot" {
			t.Fatalf("wait=%v: power actions %v", wait, got)
		}
		if waited := time.Since(start); wait && waited < 20*time.Millisecond {
			t.Errorf("rebooted after %s without waiting for the BMC", waited)
		}
	}
}

func TestServerErrorsRetried(t *testing.T) {
	reg, power, out := runAgent(t, map[string][]answer{
		agentapi.HelloPath: {{code: 503}, {code: 429}, {code: 500},
			{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: agentapi.PhaseCommissioning, Token: "tok:en:secret"}}},
		agentapi.MetadataPath: {{code: 0}, {code: 0}}, // heartbeats pass
	}, func(a *Agent) { a.Cmdline.Heartbeat = time.Hour })
	if len(reg.hellos) != 4 {
		t.Fatalf("%d hellos", len(reg.hellos))
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power actions %v", got)
	}
	if !strings.Contains(out, "hello failed (attempt 2)") {
		t.Errorf("retries not on the console")
	}
}

func TestSignalErrorsRetried(t *testing.T) {
	reg, _, _ := runAgent(t, map[string][]answer{
		agentapi.HelloPath:    {{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: agentapi.PhaseCommissioning, Token: "tok:en:secret"}}},
		agentapi.MetadataPath: {{code: 0}, {code: 502}},
	}, func(a *Agent) { a.Cmdline.Heartbeat = time.Hour })
	// one heartbeat, a refused OK, the OK again
	if len(reg.signals) != 3 || reg.signals[1].Status != "OK" || reg.signals[2].Status != "OK" {
		t.Fatalf("signals %v", statuses(reg.signals))
	}
}

func statuses(ss []signal) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Status+" "+s.Error)
	}
	return out
}

func TestClientErrorIsFatal(t *testing.T) {
	reg, power, out := runAgent(t, map[string][]answer{
		agentapi.HelloPath: {{code: 403}},
	}, nil)
	if len(reg.hellos) != 1 || len(reg.signals) != 0 {
		t.Fatalf("hellos %d signals %d", len(reg.hellos), len(reg.signals))
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" || !strings.Contains(out, "FATAL") {
		t.Fatalf("power actions %v, console %s", got, out)
	}
}

func TestPanicInPhaseSignalsFailed(t *testing.T) {
	phases := map[string]Phase{"testing": func(context.Context, *Agent, agentapi.HelloResponse) error { panic("boom") }}
	reg, power, _ := runAgent(t, map[string][]answer{
		agentapi.HelloPath: {{resp: agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: "testing", Token: "tok:en:secret"}}},
	}, func(a *Agent) { a.Phases = phases })
	if len(reg.signals) != 1 || reg.signals[0].Status != "FAILED" || !strings.Contains(reg.signals[0].Error, "boom") {
		t.Fatalf("signals %v", statuses(reg.signals))
	}
	if got := power.get(); len(got) != 1 || got[0] != "poweroff" {
		t.Fatalf("power actions %v", got)
	}
}
