package ephemeral_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/serve"
	ephemeraltest "github.com/anvilmetal/anvil/internal/testutil/ephemeral"
)

const qemuScript = `#!/bin/bash
# --- Start MAAS 1.0 script metadata ---
# name: qemu-hello
# script_type: commissioning
# timeout: 60
# --- End MAAS 1.0 script metadata ---
echo "hello from $(uname -s) with $(grep -c ^processor /proc/cpuinfo) cpu"
ls /sys/block | grep -q vda && echo "vda is here"
echo "to stderr" >&2
printf 'status: passed\n' > "$RESULT_PATH"
`

// TestQEMUCommissioningScripts boots the real environment in QEMU against
// a real Anvil: commissioning runs lshw (its XML reaches the results API
// as 00-maas-01-lshw) and an uploaded script under the environment's
// busybox shell, whose output reaches the results API; a tag whose XPath
// matches the machine's lshw memory is applied to it. The shipped tests
// run with the environment's own tools: stress-ng-cpu-short in the commissioning
// boot, fio and badblocks in a test boot on the disk commissioning found.
func TestQEMUCommissioningScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed")
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (its nc forwards the guest's connections)")
	}
	kernel, initrd := ephemeraltest.Build(t)
	ctx := context.Background()
	dataDir := t.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dataDir, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	key, err := serve.APIKey(ctx, dataDir, "", "admin")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New("http://"+srv.Addr.String()+"/MAAS/", key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Do(ctx, "POST", "scripts/", nil, url.Values{"name": {"qemu-hello"}, "script": {qemuScript}}); err != nil {
		t.Fatal(err)
	}
	const mac = "52:54:00:a1:00:01"
	m, err := cl.CreateMachine(ctx, url.Values{"hostname": {"scripted"}, "mac_addresses": {mac}, "architecture": {"amd64/generic"}})
	if err != nil {
		t.Fatal(err)
	}
	// The shipped tests, their timeouts shortened as an operator would:
	// fio and stress-ng fit their runs to it (fio's start, loading its
	// libraries, takes seconds under TCG).
	for name, timeout := range map[string]string{"fio": "40", "stress-ng-cpu-short": "10"} {
		if _, err := cl.Do(ctx, "PUT", "scripts/"+name, nil, url.Values{"timeout": {timeout}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.MachineOp(ctx, m.SystemID, "commission", url.Values{"commissioning_scripts": {"qemu-hello"},
		"testing_scripts": {"stress-ng-cpu-short"}}); err != nil {
		t.Fatal(err)
	}
	port := srv.Addr.(*net.TCPAddr).Port
	const region = "10.0.2.100"
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 64<<20); err != nil {
		t.Fatal(err)
	}
	// boot runs the environment until it powers off; the machine must
	// end Ready.
	boot := func(name string) {
		t.Helper()
		stored, err := srv.Store.GetMachine(ctx, m.SystemID)
		if err != nil {
			t.Fatal(err)
		}
		console := filepath.Join(dir, name+"-console.log")
		// The region sees the guest's connections from the host's loopback.
		enrol := agentapi.EnrolFor(stored.EnrolSecret, "127.0.0.1")
		args := []string{
			"-accel", "tcg", "-nographic", "-monitor", "none", "-serial", "file:" + console,
			"-m", "512", "-no-reboot",
			"-kernel", kernel, "-initrd", initrd,
			"-append", fmt.Sprintf("console=ttyS0 anvil.url=http://%s:%d/MAAS/metadata/ anvil.purpose=ephemeral anvil.enrol=%s", region, port, enrol),
			// Each guest connection gets its own busybox nc to the region
			// (heartbeats and reports overlap; a tcp: forward is one socket).
			"-netdev", fmt.Sprintf("user,id=n0,restrict=on,guestfwd=tcp:%s:%d-cmd:%s nc 127.0.0.1 %d", region, port, busybox, port),
			"-device", "virtio-net-pci,netdev=n0,mac=" + mac,
			"-drive", "file=" + disk + ",format=raw,if=virtio",
			"-device", "virtio-rng-pci",
		}
		cmd := exec.Command("qemu-system-x86_64", args...)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill() // QEMU's own pid only
				<-done
			}
		})
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("QEMU: %v %s", err, out)
			}
		case <-time.After(5 * time.Minute):
			log, _ := os.ReadFile(console)
			t.Fatalf("QEMU still running after %s; console:\n%s", time.Since(start), log)
		}
		log, _ := os.ReadFile(console)
		var lines []string
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "anvil-agent: ") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		t.Logf("%s: boot to power off %s; agent:\n%s", name, time.Since(start).Round(time.Millisecond), strings.Join(lines, "\n"))
		if got, _ := cl.GetMachine(ctx, m.SystemID); got.StatusName != "Ready" {
			for _, r := range currentResults(t, ctx, cl, m.SystemID, name) {
				t.Logf("%s %s: %s\n%s", r.Name, r.Device, r.Status, r.Output)
			}
			t.Fatalf("machine %s (%s); console:\n%s", got.StatusName, got.StatusMessage, log)
		}
	}
	boot("commissioning")
	testingResults(t, ctx, cl, m.SystemID, "stress-ng-cpu-short")
	got := map[string][2]string{}
	for _, r := range currentResults(t, ctx, cl, m.SystemID, "commissioning") {
		got[r.Name] = [2]string{r.Status, r.Stdout + "|" + r.Stderr}
	}
	if h := got["qemu-hello"]; h[0] != "Passed" || !strings.Contains(h[1], "hello from Linux with 1 cpu") || !strings.Contains(h[1], "vda is here") || !strings.Contains(h[1], "|to stderr") {
		t.Errorf("qemu-hello: %v", h)
	}
	if l := got["00-maas-01-lshw"]; l[0] != "Passed" || !strings.Contains(l[1], `<node id="memory"`) {
		t.Errorf("lshw: %s %.300s", l[0], l[1])
	}
	// The disk tests run per disk, so on a machine whose disks
	// commissioning found: a test boot.
	if _, err := cl.MachineOp(ctx, m.SystemID, "test", url.Values{"testing_scripts": {"fio,badblocks"}}); err != nil {
		t.Fatal(err)
	}
	boot("testing")
	testingResults(t, ctx, cl, m.SystemID, "fio on vda", "badblocks on vda")
	// A tag over the real lshw: 512 MiB of memory is more than 400 MB.
	if _, err := cl.CreateTag(ctx, url.Values{"name": {"qemu-mem"}, "definition": {`//node[@id="memory"]/size[@units="bytes"] > 400000000`}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := cl.GetMachine(ctx, m.SystemID); !strings.Contains(fmt.Sprint(got), "qemu-mem") {
		body, _ := cl.Do(ctx, "GET", "machines/"+m.SystemID+"/", nil, nil)
		if !strings.Contains(string(body), `"qemu-mem"`) {
			t.Errorf("the memory tag is not on the machine: %.400s", body)
		}
	}
}

type qemuResult struct {
	Name, Status, Runtime, Device  string
	Output, Stdout, Stderr, Result string // decoded
}

// currentResults reads the machine's current commissioning or testing
// results with their outputs.
func currentResults(t *testing.T, ctx context.Context, cl *client.Client, id, which string) []qemuResult {
	t.Helper()
	body, err := cl.Do(ctx, "GET", "nodes/"+id+"/results/current-"+which+"/", url.Values{"include_output": {"1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Results []struct {
			Name                           string `json:"name"`
			Status                         string `json:"status_name"`
			Runtime                        string `json:"runtime"`
			Device                         string `json:"physical_blockdevice"`
			Output, Stdout, Stderr, Result string
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatal(err)
	}
	var out []qemuResult
	for _, r := range set.Results {
		d := func(s string) string { b, _ := base64.StdEncoding.DecodeString(s); return string(b) }
		out = append(out, qemuResult{Name: r.Name, Status: r.Status, Runtime: r.Runtime, Device: r.Device, Output: d(r.Output), Stdout: d(r.Stdout), Stderr: d(r.Stderr), Result: d(r.Result)})
	}
	return out
}

// testingResults checks the shipped tests passed in the environment, fio
// and badblocks with their figures, and logs how long each took.
func testingResults(t *testing.T, ctx context.Context, cl *client.Client, id string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range currentResults(t, ctx, cl, id, "testing") {
		seen[r.Name] = true
		seen[r.Name+" on "+r.Device] = true
		t.Logf("testing %s %s: %s in %s; %s", r.Name, r.Device, r.Status, r.Runtime, strings.ReplaceAll(strings.TrimSpace(r.Result), "\n", ", "))
		want := map[string]string{"fio": "random_read_iops:", "badblocks": "badblocks: 0"}[r.Name]
		if r.Status != "Passed" || !strings.Contains(r.Result, want) {
			t.Errorf("%s: %s, result %q; output:\n%s", r.Name, r.Status, r.Result, r.Output)
		}
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("no %s result: %v", n, seen)
		}
	}
}
