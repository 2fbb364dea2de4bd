package redfishbmc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/redfishbmc"
)

const (
	user = "root"
	pass = "lab-Pa55word"
)

func start(t *testing.T, useTLS bool, opts redfishbmc.Options) (*redfishbmc.Service, string) {
	t.Helper()
	opts.User, opts.Password = user, pass
	if opts.Systems == nil {
		opts.Systems = []lab.Machine{lab.NewSim("node1", "u1", "52:54:00:00:00:01"), lab.NewSim("node2", "u2")}
	}
	svc := redfishbmc.New(opts)
	url, err := svc.Start("127.0.0.1:0", useTLS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc, url
}

// curl runs curl and returns the body and the HTTP status it reports.
func curl(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	args = append([]string{"-sS", "--max-time", "5", "-w", "\n%{http_code}"}, args...)
	out, err := exec.Command("curl", args...).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", args[len(args)-1], err)
	}
	s := string(out)
	i := strings.LastIndex(s, "\n")
	var body map[string]any
	if strings.TrimSpace(s[:i]) != "" {
		if err := json.Unmarshal([]byte(s[:i]), &body); err != nil {
			t.Fatalf("curl %s: not JSON: %v\n%s", args[len(args)-1], err, s[:i])
		}
	}
	return body, s[i+1:]
}

// TestCurl proves the service against a client that is not Go.
func TestCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	_, url := start(t, true, redfishbmc.Options{})
	auth := user + ":" + pass

	body, code := curl(t, "-k", "-u", auth, url+"/redfish/v1/Systems")
	if code != "200" || body["Members@odata.count"] != 2.0 || body["@odata.id"] != "/redfish/v1/Systems" {
		t.Fatalf("systems: %s %v", code, body)
	}
	body, code = curl(t, "-k", url+"/redfish/v1/")
	if code != "200" || body["@odata.type"] != "#ServiceRoot.v1_5_0.ServiceRoot" {
		t.Errorf("root without credentials: %s %v", code, body)
	}
	body, code = curl(t, "-k", url+"/redfish/v1/Systems/node1")
	if code != "401" || body["error"] == nil {
		t.Errorf("system without credentials: %s %v", code, body)
	}
	body, code = curl(t, "-k", "-u", auth, url+"/redfish/v1/Nowhere")
	if code != "404" || body["error"] == nil {
		t.Errorf("unknown path: %s %v", code, body)
	}
	_, code = curl(t, "-k", "-u", auth, "-X", "POST", "-H", "Content-Type: application/json",
		"-d", `{"ResetType":"On"}`, url+"/redfish/v1/Systems/node2/Actions/ComputerSystem.Reset")
	if code != "204" {
		t.Errorf("reset: %s", code)
	}
	body, _ = curl(t, "-k", "-u", auth, url+"/redfish/v1/Systems/node2")
	if body["PowerState"] != "On" {
		t.Errorf("after reset On: %v", body["PowerState"])
	}
	// Without -k curl refuses the self-signed certificate.
	if err := exec.Command("curl", "-sS", "--max-time", "5", "-o", "/dev/null", url+"/redfish/v1/").Run(); err == nil {
		t.Error("curl trusted the self-signed certificate")
	}
}

func TestSessionsWithGofish(t *testing.T) {
	svc, url := start(t, false, redfishbmc.Options{})
	c, err := gofish.ConnectContext(context.Background(), gofish.ClientConfig{Endpoint: url, Username: user, Password: pass})
	if err != nil {
		t.Fatal(err)
	}
	if n := svc.Sessions(); n != 1 {
		t.Fatalf("%d sessions after login", n)
	}
	systems, err := c.Service.Systems()
	if err != nil || len(systems) != 2 {
		t.Fatalf("systems over a session: %d, %v", len(systems), err)
	}
	if err := systems[0].Reset("ForceRestart"); err != nil {
		t.Fatal(err)
	}
	c.Logout()
	if n := svc.Sessions(); n != 0 {
		t.Errorf("%d sessions after logout", n)
	}
	if _, err := gofish.ConnectContext(context.Background(), gofish.ClientConfig{Endpoint: url, Username: user, Password: "wrong"}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("login with a wrong password: %v", err)
	}
}

func get(t *testing.T, url string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func TestFaults(t *testing.T) {
	svc, url := start(t, false, redfishbmc.Options{})
	sys := url + "/redfish/v1/Systems/node1"

	svc.SetFaults(lab.Faults{WrongPassword: true})
	if resp, err := get(t, sys); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %v %v", resp, err)
	}
	svc.SetFaults(lab.Faults{LossRate: 1})
	if _, err := get(t, sys); err == nil {
		t.Error("a dropped request was answered")
	}
	svc.SetFaults(lab.Faults{Delay: 100 * time.Millisecond})
	t0 := time.Now()
	if resp, err := get(t, sys); err != nil || resp.StatusCode != http.StatusOK || time.Since(t0) < 100*time.Millisecond {
		t.Errorf("delay: %v %v after %s", resp, err, time.Since(t0))
	}
	svc.SetFaults(lab.Faults{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, sys, nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	_, url := start(t, false, redfishbmc.Options{ResetTypes: []string{"On", "ForceOff"}})
	post := func(method, path, body string) int {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/redfish/v1/Systems/node1/Actions/ComputerSystem.Reset", `{"ResetType":"PowerCycle"}`, 400},
		{"POST", "/redfish/v1/Systems/node1/Actions/ComputerSystem.Reset", `{"ResetType":"ForceOff"}`, 204},
		{"PATCH", "/redfish/v1/Systems/node1", `{"Boot":{"BootSourceOverrideTarget":"Floppy"}}`, 400},
		{"PATCH", "/redfish/v1/Systems/node1", `{"AssetTag":"x"}`, 400},
		{"PATCH", "/redfish/v1/Systems/node1", `{"Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideEnabled":"Once"}}`, 204},
		{"DELETE", "/redfish/v1/Systems/node1", ``, 405},
		{"GET", "/redfish/v1/Systems/node9", ``, 404},
		{"GET", "/redfish/v1/Systems/node1/EthernetInterfaces/2", ``, 404},
	} {
		if got := post(c.method, c.path, c.body); got != c.want {
			t.Errorf("%s %s %s: %d, want %d", c.method, c.path, c.body, got, c.want)
		}
	}
}

// The log shows commands that were at the service together, and none when
// they were sent one after another.
func TestLogOverlap(t *testing.T) {
	log := &lab.Log{}
	svc, url := start(t, false, redfishbmc.Options{Log: log})
	for _, id := range []string{"node1", "node2"} {
		get(t, url+"/redfish/v1/Systems/"+id)
	}
	if a, b, found := redfishbmc.Overlap(log.Entries()); found {
		t.Fatalf("sequential commands overlap: %+v %+v", a, b)
	}
	svc.SetFaults(lab.Faults{Delay: 50 * time.Millisecond})
	var wg sync.WaitGroup
	for _, id := range []string{"node1", "node2"} {
		wg.Go(func() { get(t, url+"/redfish/v1/Systems/"+id) })
	}
	wg.Wait()
	if _, _, found := redfishbmc.Overlap(log.Entries()); !found {
		t.Error("concurrent commands not seen to overlap")
	}
	if n := len(log.Entries()); n != 4 || log.Entries()[0].Command != "status" {
		t.Errorf("log %+v", log.Entries())
	}
}
