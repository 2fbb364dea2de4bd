// Package netns gives tests private network namespaces: a bridge and tap
// devices for QEMU machines, and servers whose sockets live inside the
// namespace. Everything is removed when the test ends.
package netns

import (
	"os"
	"os/exec"
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
	n := &NS{Name: name, t: t}
	if err := nsrun.Add(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nsrun.Delete(name) })
	return n
}

// Ip runs `ip ARGS` inside the namespace and fails the test on error.
func (n *NS) Ip(args ...string) {
	n.t.Helper()
	if err := nsrun.IP(n.Name, args...); err != nil {
		n.t.Fatal(err)
	}
}

// Bridge creates bridge br with address cidr (e.g. 192.0.2.1/24) and the
// given tap devices attached, all up.
func (n *NS) Bridge(br, cidr string, taps ...string) {
	n.t.Helper()
	if err := nsrun.Bridge(n.Name, br, cidr, taps...); err != nil {
		n.t.Fatal(err)
	}
}

// Plug wires namespace to onto bridge br of n with a veth pair: port on
// the bridge, iface in to, given mac and cidr when they are not "", both
// ends up.
func (n *NS) Plug(br, port string, to *NS, iface, mac, cidr string) {
	n.t.Helper()
	n.Ip("link", "add", port, "type", "veth", "peer", "name", iface, "netns", to.Name)
	n.Ip("link", "set", port, "master", br, "up")
	if mac != "" {
		to.Ip("link", "set", iface, "address", mac)
	}
	if cidr != "" {
		to.Ip("addr", "add", cidr, "dev", iface)
	}
	to.Ip("link", "set", iface, "up")
}

// Do runs fn on an OS thread switched into the namespace: sockets fn
// creates belong to the namespace for their whole life.
func (n *NS) Do(fn func() error) error { return nsrun.Do(n.Name, fn) }

// Go runs fn (a server loop) in the namespace on its own thread.
func (n *NS) Go(fn func()) {
	nsrun.Go(n.Name, fn, func(err error) { n.t.Errorf("%v", err) })
}
