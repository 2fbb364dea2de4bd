package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/machine"
)

// installed deploys machine id (MAC mac) with image custom/NAME and plays
// its environment up to INSTALLED: the image is on the disk, network
// boot is off. It returns the environment's client, whose token is the
// one the seed carries.
func (e *env) installed(id, mac, name string) *agentapi.Client {
	e.t.Helper()
	ctx := e.t.Context()
	e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {name}}, nil)
	r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "install", Enrol: e.enrol(id)})
	if err != nil || r.Action != agentapi.ActionProceed {
		e.t.Fatalf("hello: %+v %v", r, err)
	}
	tok := e.agent(r.Token)
	if err := tok.Signal(ctx, agentapi.StatusInstalled, "", nil); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// bootResourceID is the id of the uploaded image name.
func (e *env) bootResourceID(name string) string {
	e.t.Helper()
	var rs []struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		DeployedAt string `json:"deployed_at"`
	}
	e.must(http.StatusOK, http.MethodGet, "boot-resources/", e.admin, nil, &rs)
	for _, r := range rs {
		if r.Name == name {
			return itoa(r.ID)
		}
	}
	e.t.Fatalf("no boot resource %s in %+v", name, rs)
	return ""
}

// TestDeployedAtLocalBoot: an image set deployed_at=local_boot (one
// without cloud-init) is DEPLOYED at its first boot from disk, and the
// event says so; the setting is an admin's, validated, and kept by a new
// upload that does not name it.
func TestDeployedAtLocalBoot(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.uploadImage("custom/busybox", "amd64/generic")
		res := e.bootResourceID("busybox")
		var shown map[string]any
		e.must(http.StatusOK, http.MethodGet, "boot-resources/"+res+"/", e.user, nil, &shown)
		if shown["deployed_at"] != "os" {
			t.Fatalf("default deployed_at = %v, want os", shown["deployed_at"])
		}
		e.must(http.StatusForbidden, http.MethodPut, "boot-resources/"+res+"/", e.user, url.Values{"deployed_at": {"local_boot"}}, nil)
		code, body := e.call(http.MethodPut, "boot-resources/"+res+"/", e.admin, url.Values{"deployed_at": {"at_dawn"}})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "local_boot") {
			t.Fatalf("bad deployed_at: %d %s", code, body)
		}
		e.must(http.StatusOK, http.MethodPut, "boot-resources/"+res+"/", e.admin, url.Values{"deployed_at": {"local_boot"}}, &shown)
		if shown["deployed_at"] != "local_boot" {
			t.Fatalf("deployed_at = %v", shown["deployed_at"])
		}
		e.uploadImage("custom/busybox", "amd64/generic") // a new version, not naming it
		e.must(http.StatusOK, http.MethodGet, "boot-resources/"+res+"/", e.user, nil, &shown)
		if shown["deployed_at"] != "local_boot" {
			t.Fatalf("after a new upload deployed_at = %v", shown["deployed_at"])
		}

		id := e.readyMachine("bb", "52:54:00:dd:00:01")
		e.installed(id, "52:54:00:dd:00:01", "busybox")
		e.rackBootedLocal("52:54:00:dd:00:01")
		m := e.waitStatus(id, "Deployed")
		if !e.eventSays(id, "deployed at local boot") {
			t.Fatalf("no event naming the local-boot setting (status message %q)", m.StatusMsg)
		}
	})
}

// TestOSReportRefusals: the os-up endpoint takes only the deployment's own
// token, only once the image is written, and never moves another phase.
func TestOSReportRefusals(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		e.uploadImage("custom/cloudy", "amd64/generic")
		base := e.agent("").OSUpURL()
		for _, bad := range []string{"", "x", "a:b", "a:b:", "ck:tk:secret", "::"} {
			if code, _ := osUp(t, base+bad); code != http.StatusUnauthorized && code != http.StatusNotFound {
				t.Fatalf("os-up with token %q: %d", bad, code)
			}
		}
		// A commissioning machine's token does not deploy it.
		cid := e.addMachine("comm", "52:54:00:dd:01:01", nil).SystemID
		e.must(http.StatusOK, http.MethodPost, "machines/"+cid+"/", e.admin, url.Values{"op": {"commission"}}, nil)
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:dd:01:01"), Purpose: "ephemeral", Enrol: e.enrol(cid)})
		if err != nil || r.Token == "" {
			t.Fatalf("hello: %+v %v", r, err)
		}
		if code, _ := osUp(t, e.agent(r.Token).OSUpURL()); code != http.StatusUnauthorized {
			t.Fatalf("os-up with a commissioning token: %d", code)
		}
		if m, _ := e.srv.Store.GetMachine(ctx, cid); m.Status != machine.Commissioning {
			t.Fatalf("commissioning machine moved to %s", m.Status)
		}
		// Before the image is written no installed OS can report.
		id := e.readyMachine("early", "52:54:00:dd:01:02")
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"cloudy"}}, nil)
		h, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", "52:54:00:dd:01:02"), Purpose: "install", Enrol: e.enrol(id)})
		if err != nil {
			t.Fatal(err)
		}
		if code, body := osUp(t, e.agent(h.Token).OSUpURL()); code != http.StatusConflict || !strings.Contains(body, "not written") {
			t.Fatalf("os-up before INSTALLED: %d %s", code, body)
		}
		if m, _ := e.srv.Store.GetMachine(ctx, id); m.Status != machine.Deploying {
			t.Fatalf("early os-up moved the machine to %s", m.Status)
		}
	})
}

// TestDeployOSNeverReports: an image that is written and booted but whose
// OS never reports fails at the deploy timeout, and the reason says what
// was missing and what to set for an image without cloud-init.
func TestDeployOSNeverReports(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.uploadImage("custom/silent", "amd64/generic")
		id := e.readyMachine("mute", "52:54:00:dd:02:01")
		e.installed(id, "52:54:00:dd:02:01", "silent")
		e.rackBootedLocal("52:54:00:dd:02:01")
		m := e.waitStatus(id, "Failed deployment")
		if !strings.Contains(m.StatusMsg, "never reported") || !strings.Contains(m.StatusMsg, "deployed_at=local_boot") {
			t.Fatalf("status message %q", m.StatusMsg)
		}
	}, withTimeout(3*time.Second, 100*time.Millisecond))
}

// eventSays says whether one of machine id's events contains text.
func (e *env) eventSays(id, text string) bool {
	e.t.Helper()
	var evs struct {
		Events []struct {
			Description string `json:"description"`
		} `json:"events"`
	}
	e.must(http.StatusOK, http.MethodGet, "events/", e.admin, url.Values{"op": {"query"}, "id": {id}, "limit": {"100"}}, &evs)
	for _, ev := range evs.Events {
		if strings.Contains(ev.Description, text) {
			return true
		}
	}
	return false
}
