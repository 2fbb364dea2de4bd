// Package netns gives tests private network namespaces: a bridge and tap
// devices for QEMU machines, and servers whose sockets live inside the
// namespace. Everything is removed when the test ends.
package netns

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	nsrun "github.com/anvilmetal/anvil/internal/netns"
)

// NS is a network namespace made by a test.
type NS struct {
	Name string
	t    testing.TB
}

// New creates namespace name (make it unique, e.g. with the pid) with its
// loopback up; the test is skipped when not root or without iproute2.
func New(t testing.TB, name string) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is not installed")
	}
	_ = exec.Command("ip", "netns", "del", name).Run() // a leftover of a killed run
	n := &NS{Name: name, t: t}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	n.Ip("link", "set", "lo", "up")
	return n
}

// Ip runs `ip ARGS` inside the namespace and fails the test on error.
func (n *NS) Ip(args ...string) {
	n.t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", n.Name, "ip"}, args...)...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
	}
}

// Bridge creates bridge br with address cidr (e.g. 192.0.2.1/24) and the
// given tap devices attached, all up.
func (n *NS) Bridge(br, cidr string, taps ...string) {
	n.t.Helper()
	n.Ip("link", "add", br, "type", "bridge")
	n.Ip("addr", "add", cidr, "dev", br)
	n.Ip("link", "set", br, "up")
	for _, tap := range taps {
		n.Ip("tuntap", "add", "dev", tap, "mode", "tap")
		n.Ip("link", "set", tap, "master", br)
		n.Ip("link", "set", tap, "up")
	}
}

// Do runs fn on an OS thread switched into the namespace: sockets fn
// creates belong to the namespace for their whole life.
func (n *NS) Do(fn func() error) error { return nsrun.Do(n.Name, fn) }

// Go runs fn (a server loop) in the namespace on its own thread.
func (n *NS) Go(fn func()) {
	nsrun.Go(n.Name, fn, func(err error) { n.t.Errorf("%v", err) })
}
