package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

func (e *env) addSSHKey(key string) string {
	e.t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		e.t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	e.must(http.StatusCreated, http.MethodPost, "account/prefs/sshkeys/", key, url.Values{"key": {line}}, nil)
	return line
}

// Rescue mode through the API and the environment's calls: only an
// administrator starts or ends it, as MAAS's API demands; the environment's task carries the
// owner's keys; its OK (with the host key) makes the machine Rescue mode;
// refusals are MAAS's; a deployed machine leaving rescue is Deployed at
// its local boot.
func TestRescueMode(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		mac := "52:54:00:de:00:01"
		e.uploadImage("custom/busybox", "amd64/generic")
		e.must(http.StatusOK, http.MethodPut, "boot-resources/"+e.bootResourceID("busybox")+"/", e.admin, url.Values{"deployed_at": {"local_boot"}}, nil)
		id := e.readyMachine("res", mac)
		e.installed(id, mac, "busybox")
		e.rackBootedLocal(mac)
		e.waitStatus(id, "Deployed")
		key := e.addSSHKey(e.admin)

		// Another user's machine is not there for a user (MAAS's 404); an
		// own machine is refused (ops_test): rescue is administrators'.
		e.must(http.StatusNotFound, http.MethodPost, "machines/"+id+"/", e.user, url.Values{"op": {"rescue_mode"}}, nil)
		code, body := e.call(http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"exit_rescue_mode"}})
		if code != http.StatusConflict || !strings.Contains(string(body), "Invalid transition: Deployed -> Exiting rescue mode.") {
			t.Fatalf("exit_rescue_mode while deployed: %d %s", code, body)
		}
		var m map[string]any
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"rescue_mode"}}, &m)
		if m["status_name"] != "Entering rescue mode" || m["system_id"] != id {
			t.Fatalf("rescue_mode answered %v", m["status_name"])
		}
		code, body = e.call(http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"rescue_mode"}})
		if code != http.StatusConflict || !strings.Contains(string(body), "Invalid transition: Entering rescue mode -> Entering rescue mode.") {
			t.Fatalf("rescue_mode twice: %d %s", code, body)
		}

		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "ephemeral", Enrol: e.enrol(id)})
		if err != nil || r.Action != agentapi.ActionProceed || r.Phase != agentapi.PhaseRescue {
			t.Fatalf("hello: %+v %v", r, err)
		}
		tok := e.agent(r.Token)
		task, err := tok.Task(ctx)
		if err != nil || task.Phase != agentapi.PhaseRescue || len(task.SSHKeys) != 1 || task.SSHKeys[0] != key {
			t.Fatalf("task %+v %v", task, err)
		}
		// The rescue SSH server keeps spare connections for the address
		// the administrator asked from.
		if len(task.RescueFrom) != 1 || task.RescueFrom[0] != "127.0.0.1" {
			t.Fatalf("task's rescue_from %q; want the asking address, 127.0.0.1", task.RescueFrom)
		}
		if err := tok.Signal(ctx, agentapi.StatusOK, "SSH on port 22, host key ssh-ed25519 SHA256:testprint", nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitStatus(id, "Rescue mode")
		if !strings.Contains(e.timeline(id), "SHA256:testprint") {
			t.Fatalf("the host key is not on the timeline (%s)", got.StatusMsg)
		}

		e.must(http.StatusNotFound, http.MethodPost, "machines/"+id+"/", e.user, url.Values{"op": {"exit_rescue_mode"}}, nil)
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"exit_rescue_mode"}}, &m)
		if m["status_name"] != "Exiting rescue mode" {
			t.Fatalf("exit_rescue_mode answered %v", m["status_name"])
		}
		e.rackBootedLocal(mac) // its boot was sent to the disk
		e.waitStatus(id, "Deployed")
	})
}

// Deploy to memory through the API: ephemeral_deploy is taken and shown,
// the task says so, the environment's OK makes the machine Deployed, and
// its next boot is the same deployment again.
func TestDeployToMemory(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		mac := "52:54:00:de:00:02"
		e.uploadImage("custom/busybox", "amd64/generic")
		id := e.readyMachine("ram", mac)
		code, body := e.call(http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"busybox"}, "ephemeral_deploy": {"maybe"}})
		if code != http.StatusBadRequest || !strings.Contains(string(body), "ephemeral_deploy") {
			t.Fatalf("ephemeral_deploy=maybe: %d %s", code, body)
		}
		var m map[string]any
		e.must(http.StatusOK, http.MethodGet, "machines/"+id+"/", e.admin, nil, &m)
		if m["status_name"] != "Ready" || m["ephemeral_deploy"] != false {
			t.Fatalf("a refused deploy left %v ephemeral_deploy=%v", m["status_name"], m["ephemeral_deploy"])
		}
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"deploy"}, "osystem": {"custom"}, "distro_series": {"busybox"}, "ephemeral_deploy": {"true"}}, &m)
		if m["ephemeral_deploy"] != true {
			t.Fatalf("deploy answered ephemeral_deploy=%v", m["ephemeral_deploy"])
		}
		for boot := 1; boot <= 2; boot++ {
			r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", mac), Purpose: "install", Enrol: e.enrol(id)})
			if err != nil || r.Action != agentapi.ActionProceed || r.Phase != agentapi.PhaseDeploying {
				t.Fatalf("boot %d: hello %+v %v", boot, r, err)
			}
			tok := e.agent(r.Token)
			task, err := tok.Task(ctx)
			if err != nil || !task.Ephemeral || task.Image == nil {
				t.Fatalf("boot %d: task %+v %v", boot, task, err)
			}
			if err := tok.Signal(ctx, agentapi.StatusOK, "running from memory", nil); err != nil {
				t.Fatalf("boot %d: %v", boot, err)
			}
			e.waitStatus(id, "Deployed")
		}
		if tl := e.timeline(id); !strings.Contains(tl, "Booted the deployment in memory again") {
			t.Fatalf("the second boot is not on the timeline:\n%s", tl)
		}
		e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/", e.admin, url.Values{"op": {"release"}, "erase": {"true"}}, &m)
		if m["status_name"] != "Releasing" {
			t.Fatalf("release of a deployment in memory: %v, want Releasing (no erase)", m["status_name"])
		}
	})
}

// timeline is every event description of machine id, one a line.
func (e *env) timeline(id string) string {
	e.t.Helper()
	var evs struct {
		Events []struct {
			Description string `json:"description"`
		} `json:"events"`
	}
	e.must(http.StatusOK, http.MethodGet, "events/", e.admin, url.Values{"op": {"query"}, "id": {id}, "limit": {"100"}}, &evs)
	var lines []string
	for _, ev := range evs.Events {
		lines = append(lines, ev.Description)
	}
	return strings.Join(lines, "\n")
}
