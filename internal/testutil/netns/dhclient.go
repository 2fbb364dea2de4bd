package netns

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// Dhclient runs ISC dhclient in the foreground (-d, so the process the
// test started is the one holding the lease, with no daemon to chase by
// pid file) on iface inside namespace ns, until its lease file matches
// done; then it stops it and returns the file. conf is dhclient.conf's
// text; tag names the run's files in dir.
func Dhclient(t testing.TB, ns, iface, dir, tag, conf string, done *regexp.Regexp) string {
	t.Helper()
	cf, lf, pf := filepath.Join(dir, "dhclient"+tag+".conf"), filepath.Join(dir, "dhclient"+tag+".leases"), filepath.Join(dir, "dhclient"+tag+".pid")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "dhclient", "-d", "-1", "-v", "-cf", cf, "-lf", lf, "-pf", pf, "-sf", "/bin/true", iface)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	for {
		if b, _ := os.ReadFile(lf); done.Match(b) {
			return string(b)
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("dhclient exited without a lease: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
