package ephemeral_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/agent"
	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/testutil/diskimage"
	ephemeraltest "github.com/anvilmetal/anvil/internal/testutil/ephemeral"
)

// TestQEMUDeployTarball boots the environment in QEMU against a fake
// region that gives it a deployment of a root filesystem tarball: the
// agent partitions the disk, makes and fills the filesystem with the
// tools the initramfs carries, installs the boot loader and the seed,
// signals INSTALLED and reboots. The disk then boots in QEMU on its own
// and the installed system prints the seed's settings.
func TestQEMUDeployTarball(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed")
	}
	for _, tool := range agent.RootfsTools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the environment cannot carry it", tool)
		}
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox (its nc relays the guest's connections) is not installed")
	}
	tgz, size := diskimage.BuildRootfs(t)
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	kernel, initrd := ephemeraltest.Build(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	const region = "10.0.2.100"
	sum := sha256.Sum256(data)
	host, ud := "tarball-vm", "#cloud-config from the tarball test"
	task := agentapi.Task{
		Hostname: host, InstanceID: "i-tarball", UserData: []byte(ud + "\n"),
		Image: &agentapi.Image{URL: fmt.Sprintf("http://%s:%d/images/rootfs.tgz", region, port),
			SHA256: hex.EncodeToString(sum[:]), Size: size, FileType: agent.FileTypeTgz},
	}
	var (
		mu       sync.Mutex
		statuses []string
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /MAAS/metadata/"+agentapi.HelloPath, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(agentapi.HelloResponse{Action: agentapi.ActionProceed, Phase: agentapi.PhaseDeploying, Token: "tok:en:secret"})
	})
	mux.HandleFunc("GET /MAAS/metadata/"+agentapi.TaskPath, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(task)
	})
	mux.HandleFunc("POST /MAAS/metadata/"+agentapi.MetadataPath, func(w http.ResponseWriter, r *http.Request) {
		r.ParseMultipartForm(1 << 20)
		mu.Lock()
		statuses = append(statuses, r.FormValue("status")+" "+r.FormValue("error"))
		mu.Unlock()
	})
	mux.HandleFunc("GET /images/rootfs.tgz", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "rootfs.tgz", time.Time{}, bytes.NewReader(data))
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	dir := t.TempDir()
	disk := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 256<<20); err != nil {
		t.Fatal(err)
	}
	console := filepath.Join(dir, "console.log")
	// The heartbeat and the download overlap: a guestfwd to a socket
	// carries one connection, a command gets one for each.
	fwd := fmt.Sprintf("guestfwd=tcp:%s:%d-cmd:%s nc 127.0.0.1 %d", region, port, busybox, port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// -no-reboot: the agent's reboot ends QEMU.
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "tcg", "-nographic", "-monitor", "none",
		"-serial", "file:"+console, "-m", "512", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", fmt.Sprintf("console=ttyS0 anvil.url=http://%s:%d/MAAS/metadata/ anvil.purpose=install", region, port),
		"-netdev", "user,id=n0,restrict=on,"+fwd, "-device", "virtio-net-pci,netdev=n0,mac=52:54:00:a0:00:11",
		"-drive", "file="+disk+",format=raw,if=virtio", "-device", "virtio-rng-pci")
	var qout strings.Builder
	cmd.Stdout, cmd.Stderr = &qout, &qout
	start := time.Now()
	err = cmd.Run()
	log, _ := os.ReadFile(console)
	var agentLines []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "anvil-agent: ") {
			agentLines = append(agentLines, strings.TrimSpace(l))
		}
	}
	t.Logf("environment ran %s; agent console:\n%s", time.Since(start).Round(time.Millisecond), strings.Join(agentLines, "\n"))
	if err != nil {
		t.Fatalf("QEMU: %v %s\nconsole:\n%s", err, qout.String(), log)
	}
	mu.Lock()
	got := strings.Join(statuses, "\n")
	mu.Unlock()
	if !strings.Contains(got, agentapi.StatusInstalled) {
		t.Fatalf("no INSTALLED signal; signals:\n%s\nconsole:\n%s", got, log)
	}

	serial := filepath.Join(dir, "installed.log")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel2()
	boot := exec.CommandContext(ctx2, "qemu-system-x86_64", "-accel", "tcg", "-m", "256", "-nographic", "-monitor", "none",
		"-serial", "file:"+serial, "-drive", "file="+disk+",format=raw,if=virtio", "-net", "none")
	if err := boot.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { boot.Process.Kill(); boot.Wait() }()
	want := diskimage.Line(host, ud)
	for {
		b, _ := os.ReadFile(serial)
		if bytes.Contains(b, []byte(want)) {
			return
		}
		if ctx2.Err() != nil {
			t.Fatalf("no %q from the installed system:\n%s", want, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
