package ephemeral_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agentapi"
	ephemeraltest "github.com/anvilmetal/anvil/internal/testutil/ephemeral"
)

// TestQEMUEnlist boots the environment in QEMU (TCG) with two NICs, a disk
// and an in-band BMC against a fake region that answers enlist, then
// poweroff: the agent must describe the machine and power it off.
func TestQEMUEnlist(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed")
	}
	buildStart := time.Now()
	kernel, initrd := ephemeraltest.Build(t)
	st, err := os.Stat(initrd)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image ready in %s; initrd %d bytes (%.1f MiB)", time.Since(buildStart).Round(time.Millisecond), st.Size(), float64(st.Size())/(1<<20))

	var (
		mu      sync.Mutex
		hellos  []agentapi.HelloRequest
		enlists []agentapi.EnlistRequest
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /MAAS/metadata/"+agentapi.HelloPath, record(&mu, &hellos, agentapi.HelloResponse{Action: agentapi.ActionEnlist}))
	mux.HandleFunc("POST /MAAS/metadata/"+agentapi.EnlistPath, record(&mu, &enlists, agentapi.EnlistResponse{Action: agentapi.ActionPowerOff, SystemID: "qemu01"}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 64<<20); err != nil {
		t.Fatal(err)
	}
	console := filepath.Join(dir, "console.log")
	const uuid = "6f3c1a2e-8b4d-4e5f-9a0b-1c2d3e4f5a6b"
	macs := []string{"52:54:00:a0:00:01", "52:54:00:a0:00:02"}
	// restrict=on keeps the guest off every network, the host included;
	// guestfwd lets it reach the fake region (on the host's loopback) as
	// 10.0.2.100 (slirp keeps 10.0.2.2, its host alias, to itself). The
	// second NIC is on a network of its own, which reaches nothing.
	const region = "10.0.2.100"
	fwd := fmt.Sprintf("guestfwd=tcp:%s:%d-tcp:127.0.0.1:%d", region, port, port)
	args := []string{
		"-accel", "tcg", "-nographic", "-monitor", "none", "-serial", "file:" + console,
		"-m", "512", "-no-reboot", "-uuid", uuid,
		"-kernel", kernel, "-initrd", initrd,
		"-append", fmt.Sprintf("console=ttyS0 anvil.url=http://%s:%d/MAAS/metadata/ anvil.purpose=enlist anvil.enrol=qemu-secret", region, port),
		"-netdev", "user,id=n0,restrict=on," + fwd, "-device", "virtio-net-pci,netdev=n0,mac=" + macs[0],
		"-netdev", "user,id=n1,restrict=on,net=10.0.3.0/24", "-device", "e1000,netdev=n1,mac=" + macs[1],
		"-drive", "file=" + disk + ",format=raw,if=virtio",
		"-device", "virtio-rng-pci",
		"-device", "ipmi-bmc-sim,id=bmc0", "-device", "isa-ipmi-kcs,bmc=bmc0",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.Command("qemu-system-x86_64", args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // QEMU's own pid only
			<-done
		}
	})
	var waitErr error
	select {
	case waitErr = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		log, _ := os.ReadFile(console)
		t.Fatalf("QEMU (pid %d) still running after %s; console:\n%s\nqemu: %s", pid, time.Since(start), log, out)
	}
	elapsed := time.Since(start)
	log, _ := os.ReadFile(console)
	if waitErr != nil {
		t.Fatalf("QEMU: %v %s\nconsole:\n%s", waitErr, out, log)
	}
	var agentLines []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "anvil-agent: ") {
			agentLines = append(agentLines, strings.TrimSpace(l))
		}
	}
	t.Logf("QEMU boot to power off: %s; initrd %d bytes; agent console:\n%s", elapsed.Round(time.Millisecond), st.Size(), strings.Join(agentLines, "\n"))
	if strings.Contains(strings.Join(agentLines, "\n"), "qemu-secret") {
		t.Error("the console shows the enrolment secret")
	}
	if !regexp.MustCompile(`anvil-agent: stage kernel-to-agent=\d+ms .*dhcp=\d+ms .*hello=\d+ms`).MatchString(string(log)) {
		t.Errorf("no stage line on the console")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(hellos) != 1 || len(enlists) != 1 {
		t.Fatalf("%d hellos, %d enlists; console:\n%s", len(hellos), len(enlists), log)
	}
	h := hellos[0]
	if !slices.Equal(h.MACs, macs) || h.UUID != uuid || h.Firmware != "bios" || h.Arch != "amd64/generic" || h.Purpose != "enlist" || h.Enrol != "qemu-secret" {
		t.Errorf("hello %+v", h)
	}
	if !slices.Contains(macs, h.BootMAC) {
		t.Errorf("boot MAC %q", h.BootMAC)
	}
	bmc, _ := json.Marshal(h.BMC)
	t.Logf("BMC read in-band: %s", bmc)
	inv := enlists[0].Inventory
	if inv == nil {
		t.Fatal("enlist without inventory")
	}
	js, _ := json.Marshal(inv)
	t.Logf("inventory: %s", js)
	var haveDisk bool
	for _, d := range inv.Disks {
		haveDisk = haveDisk || (d.Name == "vda" && d.Size == 64<<20)
	}
	if !haveDisk {
		t.Errorf("no 64 MiB vda in %+v", inv.Disks)
	}
	drivers := map[string]string{}
	for _, n := range inv.NICs {
		drivers[n.MAC] = n.Driver
	}
	if drivers[macs[0]] != "virtio_net" || drivers[macs[1]] != "e1000" {
		t.Errorf("NIC drivers %v", drivers)
	}
	if inv.MemoryMiB < 400 || inv.MemoryMiB > 512 {
		t.Errorf("memory %d MiB", inv.MemoryMiB)
	}
	if inv.CPU.Threads < 1 || inv.CPU.Model == "" {
		t.Errorf("CPU %+v", inv.CPU)
	}
	if inv.SMBIOS.UUID != uuid || inv.Firmware != "bios" {
		t.Errorf("SMBIOS %+v firmware %s", inv.SMBIOS, inv.Firmware)
	}
}

// record keeps each request's JSON body in *into and answers with answer.
func record[T any](mu *sync.Mutex, into *[]T, answer any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var v T
		_ = json.NewDecoder(r.Body).Decode(&v)
		mu.Lock()
		*into = append(*into, v)
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(answer)
	}
}
