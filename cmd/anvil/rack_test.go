package main

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestRackProcess runs `anvil serve` and a separate `anvil rack` process
// with its own key: the rack answers a known machine's per-MAC config from
// its cache, also after the region process is killed, and so does its DNS.
func TestRackProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "anvil")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "region")
	rport, hport := freePort(t), freePort(t)
	region := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:"+rport, "--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "", "--log-level", "error")
	if err := region.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = region.Process.Kill(); _ = region.Wait() }()
	waitFor(t, "http://127.0.0.1:"+rport+"/healthz")
	key := apikey(t, bin, data, "rack")
	base := "http://127.0.0.1:" + rport + "/MAAS/"

	f := url.Values{"hostname": {"pxe-known"}, "mac_addresses": {"52:54:00:ab:cd:ef"}}
	req, _ := http.NewRequest("POST", base+"api/2.0/machines/", strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", authHeader(key))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create machine: %v %v", resp, err)
	}
	resp.Body.Close()
	f = url.Values{"fqdn": {"vip.maas"}, "ip_addresses": {"192.0.2.20"}}
	req, _ = http.NewRequest("POST", base+"api/2.0/dnsresources/", strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", authHeader(key))
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create DNS resource: %v %v", resp, err)
	}
	resp.Body.Close()

	dport := freePort(t)
	rk := exec.Command(bin, "rack", "--region", base, "--key", key, "--data", filepath.Join(dir, "rack"),
		"--tftp-listen", "", "--dns-listen", "127.0.0.1:"+dport, "--boot-http-listen", "127.0.0.1:"+hport)
	rk.Stderr = io.Discard
	if err := rk.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rk.Process.Signal(syscall.SIGTERM); _ = rk.Wait() }()
	cfg := "http://127.0.0.1:" + hport + "/ipxe.cfg-52:54:00:ab:cd:ef"
	get := func() (int, string) {
		resp, err := http.Get(cfg)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get()
		if code == 200 && strings.Contains(body, "anvil.purpose=ephemeral") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rack never answered the known machine: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The rack has the names before the region goes (they come in the
	// same stream, not always in the same step as the machine).
	q := new(dns.Msg)
	q.SetQuestion("vip.maas.", dns.TypeA)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err := dns.Exchange(q, "127.0.0.1:"+dport); err == nil && len(r.Answer) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rack's DNS never answered vip.maas. while the region ran")
		}
	}
	// Kill the region: the rack still answers.
	_ = region.Process.Kill()
	_ = region.Wait()
	if code, body := get(); code != 200 || !strings.Contains(body, "pxe-known") {
		t.Fatalf("with the region killed the rack answers %d %s", code, body)
	}
	if r, err := dns.Exchange(q, "127.0.0.1:"+dport); err != nil || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "192.0.2.20" {
		t.Fatalf("with the region killed the rack's DNS answers %v %v", r, err)
	}
	if code, _ := get2("http://127.0.0.1:" + hport + "/ipxe.cfg-52:54:00:00:00:01"); code != 404 {
		t.Fatalf("unknown MAC answered %d, want 404", code)
	}
}

func get2(u string) (int, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func apikey(t *testing.T, bin, data, user string) string {
	out, err := exec.Command(bin, "apikey", "--username", user, "--data", data).Output()
	if err != nil {
		t.Fatalf("apikey: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestImportLoaders copies the loaders from Debian's packages.
func TestImportLoaders(t *testing.T) {
	for _, l := range loaderFiles {
		if _, err := os.Stat(l.from); err != nil {
			t.Skipf("%s missing (package %s; scripts/test.sh installs it)", l.from, l.pkg)
		}
	}
	dir := t.TempDir()
	c := importLoadersCmd()
	c.SetArgs([]string{"--data", dir})
	c.SetOut(io.Discard)
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, l := range loaderFiles {
		a, _ := os.ReadFile(l.from)
		b, err := os.ReadFile(filepath.Join(dir, "boot", l.to))
		if err != nil || len(a) != len(b) {
			t.Fatalf("%s not imported whole: %v", l.to, err)
		}
	}
}
