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

	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestRackFollowsTheNextRegion: a rack given two regions sharing one
// PostgreSQL follows the first; when that region is killed it follows
// the second, so a machine added there is answered by the rack.
func TestRackFollowsTheNextRegion(t *testing.T) {
	bin := anvilBinary(t)
	db := pgtest.URL(t)
	dir := t.TempDir()
	env := append(os.Environ(), "ANVIL_SECRET_KEY="+strings.Repeat("6b", 32))
	var bases []string
	var regions []*exec.Cmd
	for _, name := range []string{"r1", "r2"} {
		port := freePort(t)
		c := exec.Command(bin, "serve", "--db", db, "--data", filepath.Join(dir, name), "--listen", "127.0.0.1:"+port,
			"--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "", "--log-level", "error")
		c.Env = env
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		waitFor(t, "http://127.0.0.1:"+port+"/healthz")
		bases = append(bases, "http://127.0.0.1:"+port+"/MAAS/")
		regions = append(regions, c)
	}
	keyCmd := exec.Command(bin, "apikey", "--username", "rack", "--db", db, "--data", filepath.Join(dir, "r1"))
	keyCmd.Env = env
	out, err := keyCmd.Output()
	if err != nil {
		t.Fatalf("apikey: %v", err)
	}
	key := strings.TrimSpace(string(out))
	addMachine := func(base, host, mac string) {
		t.Helper()
		f := url.Values{"hostname": {host}, "mac_addresses": {mac}}
		req, _ := http.NewRequest("POST", base+"api/2.0/machines/", strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", authHeader(key))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("create %s at %s: %v %v", host, base, resp, err)
		}
		resp.Body.Close()
	}

	hport := freePort(t)
	rk := exec.Command(bin, "rack", "--region", strings.Join(bases, ","), "--key", key, "--data", filepath.Join(dir, "rack"),
		"--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "127.0.0.1:"+hport)
	rk.Stderr = io.Discard
	if err := rk.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rk.Process.Signal(syscall.SIGTERM); _ = rk.Wait() }()
	answers := func(mac, host string, within time.Duration) {
		t.Helper()
		u := "http://127.0.0.1:" + hport + "/ipxe.cfg-" + mac
		for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
			resp, err := http.Get(u)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && strings.Contains(string(b), host) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the rack never answered %s (%s)", host, mac)
			}
		}
	}
	addMachine(bases[0], "first", "52:54:00:ab:00:01")
	answers("52:54:00:ab:00:01", "first", 20*time.Second)

	_ = regions[0].Process.Kill()
	_ = regions[0].Wait()
	t0 := time.Now()
	addMachine(bases[1], "second", "52:54:00:ab:00:02")
	answers("52:54:00:ab:00:02", "second", 45*time.Second)
	t.Logf("the rack answered a machine added at the second region %.1f s after the first was killed", time.Since(t0).Seconds())
}
