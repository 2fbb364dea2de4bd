package netns

import (
	"context"
	"github.com/anvilmetal/anvil/internal/testutil/syncbuf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
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
	d := StartDhclient(t, ns, iface, dir, tag, conf, "")
	defer d.Stop()
	return d.Wait(done.MatchString, 20*time.Second)
}

// DhclientRun is a dhclient that runs on, renewing and rebinding, until
// Stop (or the test's end).
type DhclientRun struct {
	t      testing.TB
	cmd    *exec.Cmd
	lf     string
	exited chan error
	out    *syncbuf.Buffer
	once   sync.Once
}

// StartDhclient starts dhclient as Dhclient does. script is its -sf
// script ("" runs none: the address is not put on iface, which is enough
// to see a lease but not to renew one by unicast). A later start with the
// same tag finds the lease file of the last: dhclient then asks for that
// address again (INIT-REBOOT) before it discovers.
func StartDhclient(t testing.TB, ns, iface, dir, tag, conf, script string) *DhclientRun {
	t.Helper()
	cf, lf, pf := filepath.Join(dir, "dhclient"+tag+".conf"), filepath.Join(dir, "dhclient"+tag+".leases"), filepath.Join(dir, "dhclient"+tag+".pid")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if script == "" {
		script = "/bin/true"
	}
	d := &DhclientRun{t: t, lf: lf, exited: make(chan error, 1), out: &syncbuf.Buffer{}}
	d.cmd = exec.Command("ip", "netns", "exec", ns, "dhclient", "-d", "-1", "-v", "-cf", cf, "-lf", lf, "-pf", pf, "-sf", script, iface)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(d.Stop)
	return d
}

// Wait returns the lease file once cond accepts it; it fails the test
// when dhclient exits first or within timeout it does not. dhclient
// writes a renewed lease at most every 15 s: WaitOutput sees it sooner.
func (d *DhclientRun) Wait(cond func(leases string) bool, timeout time.Duration) string {
	d.t.Helper()
	return d.wait("lease", func() string { b, _ := os.ReadFile(d.lf); return string(b) }, cond, timeout)
}

// WaitOutput returns what dhclient printed once cond accepts it (its log
// names every DHCPACK and its server as it comes), failing as Wait does.
func (d *DhclientRun) WaitOutput(cond func(output string) bool, timeout time.Duration) string {
	d.t.Helper()
	return d.wait("output", d.out.String, cond, timeout)
}

func (d *DhclientRun) wait(what string, read func() string, cond func(string) bool, timeout time.Duration) string {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if s := read(); cond(s) {
			return s
		}
		select {
		case err := <-d.exited:
			d.exited <- err
			d.t.Fatalf("dhclient exited without the %s wanted: %v\n%s", what, err, d.out.String())
		case <-ctx.Done():
			b, _ := os.ReadFile(d.lf)
			d.t.Fatalf("dhclient: not the %s wanted in %s; leases:\n%s\noutput:\n%s", what, timeout, b, d.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Output is what dhclient printed so far.
func (d *DhclientRun) Output() string { return d.out.String() }

// Stop ends dhclient (SIGTERM: it keeps its lease, releases nothing) and
// waits for it; it may be called more than once.
func (d *DhclientRun) Stop() {
	d.once.Do(func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-d.exited:
		case <-time.After(5 * time.Second):
			d.cmd.Process.Kill()
			err = <-d.exited
		}
		d.exited <- err
	})
}
