package dhcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"

	"github.com/anvilmetal/anvil/internal/netns"
)

// topo is two network namespaces of the test's own, joined by a veth
// pair: the server on one end, clients on the other. Nothing touches the
// host's interfaces: the pair is created inside the server namespace.
type topo struct {
	srvNS, cliNS string
	srvIf, cliIf string
}

func needNetns(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
}

func needBinary(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("needs %s (Debian package %s)", name, pkg)
	}
	return p
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func newTopo(t *testing.T) *topo {
	pid := os.Getpid()
	tp := &topo{
		srvNS: fmt.Sprintf("anvds%d", pid), cliNS: fmt.Sprintf("anvdc%d", pid),
		srvIf: fmt.Sprintf("vs%d", pid), cliIf: fmt.Sprintf("vc%d", pid),
	}
	for _, ns := range []string{tp.srvNS, tp.cliNS} {
		sh(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	// Deleting either namespace destroys the pair.
	sh(t, "ip", "-n", tp.srvNS, "link", "add", tp.srvIf, "type", "veth", "peer", "name", tp.cliIf, "netns", tp.cliNS)
	for _, a := range []string{"192.0.2.1/24", "198.18.0.1/15"} {
		sh(t, "ip", "-n", tp.srvNS, "addr", "add", a, "dev", tp.srvIf)
	}
	for _, c := range [][2]string{{tp.srvNS, tp.srvIf}, {tp.cliNS, tp.cliIf}} {
		sh(t, "ip", "-n", c[0], "link", "set", "lo", "up")
		sh(t, "ip", "-n", c[0], "link", "set", c[1], "up")
	}
	// The client side doubles as a relay agent on 198.18.0.0/15, which
	// reaches the server's 192.0.2.1 across the link.
	sh(t, "ip", "-n", tp.cliNS, "addr", "add", "198.18.0.2/15", "dev", tp.cliIf)
	sh(t, "ip", "-n", tp.cliNS, "route", "add", "192.0.2.1/32", "dev", tp.cliIf, "src", "198.18.0.2")
	return tp
}

// running is a server serving on the server end of the pair, with a
// file-backed lease store.
type running struct {
	srv   *Server
	store *FileStore
	done  chan error

	mu     sync.Mutex
	events []Event
}

func (r *running) observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// logEvents shows what the server saw, when a client test fails.
func (r *running) logEvents(t *testing.T) {
	if !t.Failed() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		t.Logf("server event: %s mac=%s ip=%s subnet=%s relay=%s boot=%q reason=%s", e.Kind, e.MAC, e.IP, e.Subnet, e.Relay, e.BootFile, e.Reason)
	}
	t.Logf("stats: %+v", r.srv.Stats())
}

func startServer(t *testing.T, tp *topo, cfg Config, leases string) *running {
	t.Helper()
	store, err := OpenFileStore(leases)
	if err != nil {
		t.Fatal(err)
	}
	r := &running{store: store, done: make(chan error, 1)}
	srv, err := NewServer(cfg, store, WithObserver(r.observe),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	ready := make(chan struct{})
	srv.listening = func() { close(ready) }
	go func() {
		runtime.LockOSThread() // never unlocked, see inNS
		if err := netns.Enter(tp.srvNS); err != nil {
			r.done <- err
			return
		}
		r.done <- srv.ListenAndServe(tp.srvIf)
	}()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("server did not start in 5s")
	}
	return r
}

// stop closes the server and its store; it is idempotent.
func (r *running) stop(t *testing.T) {
	if r.done == nil {
		return
	}
	r.srv.Close()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("server did not stop")
	}
	r.done = nil
	r.store.Close()
}

// clientConn opens a UDP socket in the client namespace, bound to the
// client interface, allowed to broadcast.
func clientConn(t *testing.T, tp *topo, laddr *net.UDPAddr) *net.UDPConn {
	t.Helper()
	c, err := netns.Call(tp.cliNS, func() (*net.UDPConn, error) { return server4.NewIPv4UDPConn(tp.cliIf, laddr) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var errNoReply = errors.New("no reply")

// exchange sends req to dst and waits for the reply with its xid.
func exchange(c *net.UDPConn, req *dhcpv4.DHCPv4, dst *net.UDPAddr, wait time.Duration) (*dhcpv4.DHCPv4, error) {
	if _, err := c.WriteTo(req.ToBytes(), dst); err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, errNoReply
			}
			return nil, err
		}
		resp, err := dhcpv4.FromBytes(buf[:n])
		if err == nil && resp.OpCode == dhcpv4.OpcodeBootReply && resp.TransactionID == req.TransactionID {
			return resp, nil
		}
	}
}

// nsCommand runs a program in the client namespace; ctx bounds it.
func nsCommand(ctx context.Context, tp *topo, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", tp.cliNS}, args...)...)
}

// setClientMAC gives the client interface a chosen MAC, so each real
// client in turn looks like a different (or a known) machine.
func setClientMAC(t *testing.T, tp *topo, mac net.HardwareAddr) {
	sh(t, "ip", "-n", tp.cliNS, "link", "set", tp.cliIf, "address", mac.String())
}
