package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/testutil/netns"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// anvilBinary builds the binary for one test (the Go build cache makes
// all but the first quick).
func anvilBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "anvil")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startServe runs `anvil serve` on data until the test ends and waits
// until it answers.
func startServe(t *testing.T, bin, data string, extra ...string) *exec.Cmd {
	t.Helper()
	port := freePort(t)
	args := append([]string{"serve", "--data", data, "--listen", "127.0.0.1:" + port,
		"--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "", "--log-level", "error"}, extra...)
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get("http://127.0.0.1:" + port + "/healthz"); err == nil {
			resp.Body.Close()
			return cmd
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("anvil %v not up after 30 s:\n%s", args, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refused runs the binary, which must exit at once with an error, and
// returns what it said.
func refused(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v still running after 20 s; it should have been refused:\n%s", args, out.String())
	}
	if err == nil {
		t.Fatalf("%v started; it should have been refused:\n%s", args, out.String())
	}
	return out.String()
}

// TestDataDirHeldByOneProcess starts `anvil serve` and then a second
// `anvil serve` and an `anvil rack` on the same data directory with other
// ports: both are refused, naming the first's pid. Once the first stops,
// the directory may be used again.
func TestDataDirHeldByOneProcess(t *testing.T) {
	bin := anvilBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	first := startServe(t, bin, data)
	pid := "pid " + strconv.Itoa(first.Process.Pid)

	msg := refused(t, bin, "serve", "--data", data, "--listen", "127.0.0.1:"+freePort(t),
		"--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "127.0.0.1:"+freePort(t))
	if !strings.Contains(msg, "in use by "+pid+" (anvil serve)") || !strings.Contains(msg, data) {
		t.Errorf("second serve refused with %q, want the directory and %q named", msg, pid)
	}
	msg = refused(t, bin, "rack", "--data", data, "--region", "http://127.0.0.1:1/MAAS/", "--key", "a:b:c",
		"--tftp-listen", "", "--dns-listen", "", "--boot-http-listen", "127.0.0.1:"+freePort(t))
	if !strings.Contains(msg, "in use by "+pid) {
		t.Errorf("rack refused with %q, want %q named", msg, pid)
	}

	_ = first.Process.Kill() // the kernel drops the lock with the process
	_ = first.Wait()
	startServe(t, bin, data)
}

// TestPostgresRegionsShareDatabase: two regions on one PostgreSQL
// database, each with its own data directory (and the site's one secret
// key), both run.
func TestPostgresRegionsShareDatabase(t *testing.T) {
	bin := anvilBinary(t)
	db := pgtest.URL(t)
	t.Setenv("ANVIL_SECRET_KEY", strings.Repeat("5a", 32))
	startServe(t, bin, filepath.Join(t.TempDir(), "a"), "--db", db)
	startServe(t, bin, filepath.Join(t.TempDir(), "b"), "--db", db)
}

// TestBootURLFromTheDHCPInterface runs `anvil serve` with DHCP on a bridge
// (192.0.2.1/24) in a namespace of its own. With HTTP boot on every
// address, the configs machines fetch name the bridge's address for the
// boot server and the metadata API; a loopback boot listener or API
// listener there is refused at start-up, naming the flag to set.
func TestBootURLFromTheDHCPInterface(t *testing.T) {
	bin := anvilBinary(t)
	ns := netns.New(t, fmt.Sprintf("anvboot%d", os.Getpid()))
	ns.Bridge("br0", "192.0.2.1/24")
	in := func(args ...string) []string { return append([]string{"netns", "exec", ns.Name, bin}, args...) }
	data := func() string { return filepath.Join(t.TempDir(), "data") }

	msg := refused(t, "ip", in("serve", "--data", data(), "--listen", ":5240", "--tftp-listen", "", "--dns-listen", "",
		"--boot-http-listen", "127.0.0.1:5248", "--dhcp-interface", "br0")...)
	if !strings.Contains(msg, "boot URL http://127.0.0.1:5248") || !strings.Contains(msg, "set --boot-http-listen") {
		t.Errorf("loopback boot listener refused with %q", msg)
	}
	msg = refused(t, "ip", in("serve", "--data", data(), "--listen", "127.0.0.1:5240", "--tftp-listen", "", "--dns-listen", "",
		"--boot-http-listen", ":5248", "--dhcp-interface", "br0")...)
	if !strings.Contains(msg, "metadata URL http://127.0.0.1:5240/MAAS/metadata/") || !strings.Contains(msg, "set --listen") {
		t.Errorf("loopback API listener refused with %q", msg)
	}
	msg = refused(t, "ip", in("serve", "--data", data(), "--listen", ":5240", "--tftp-listen", "", "--dns-listen", "",
		"--boot-http-listen", ":5248", "--boot-http-url", "http://[::]:5248", "--dhcp-interface", "br0")...)
	if !strings.Contains(msg, "set --boot-http-url") {
		t.Errorf("unspecified --boot-http-url refused with %q", msg)
	}

	srv := exec.Command("ip", in("serve", "--data", data(), "--listen", ":5240", "--tftp-listen", "", "--dns-listen", "",
		"--boot-http-listen", ":5248", "--dhcp-interface", "br0", "--log-level", "error")...)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	get := func(path string) string {
		var body string
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := ns.Do(func() error {
				c, err := net.DialTimeout("tcp", "192.0.2.1:5248", time.Second)
				if err != nil {
					return err
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\n\r\n", path); err != nil {
					return err
				}
				b, err := io.ReadAll(c)
				body = string(b)
				return err
			})
			if err == nil && strings.HasPrefix(body, "HTTP/1.0 200") {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v %q", path, err, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if b := get("/ipxe.cfg"); !strings.Contains(b, "chain --autofree --replace http://192.0.2.1:5248/ipxe.cfg-${mac}") {
		t.Errorf("ipxe.cfg does not chain to the bridge's address:\n%s", b)
	}
	if b := get("/ipxe.cfg-default-amd64"); !strings.Contains(b, "anvil.url=http://192.0.2.1:5240/MAAS/metadata/") ||
		!strings.Contains(b, "http://192.0.2.1:5248/ephemeral/vmlinuz") {
		t.Errorf("the enlistment config does not name the bridge's address:\n%s", b)
	}
}
