package dhcp

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	nstest "github.com/anvilmetal/anvil/internal/testutil/netns"
)

// netnsConfig is testConfig with the relay network widened to
// 198.18.0.0/15, big enough for perfdhcp's 500 clients.
func netnsConfig() Config {
	cfg := testConfig()
	cfg.Subnets[1] = Subnet{
		CIDR:    netip.MustParsePrefix("198.18.0.0/15"),
		Gateway: netip.MustParseAddr("198.18.0.1"),
		Dynamic: []Range{rng("198.18.1.0", "198.18.8.255")},
		Enabled: true,
	}
	cfg.Subnets[2] = Subnet{CIDR: netip.MustParsePrefix("198.51.100.0/24")} // disabled
	return cfg
}

var (
	dhclientMAC = mustMAC("52:54:00:aa:00:01")
	seedMAC     = mustMAC("52:54:00:aa:00:02")
)

// TestNetns drives the server with real DHCP clients across a veth pair
// between two namespaces the test creates.
func TestNetns(t *testing.T) {
	needNetns(t)
	tp := newTopo(t)
	dir := t.TempDir()
	leases := filepath.Join(dir, "leases.jsonl")

	// Another machine already holds the first pool address, so a server
	// that forgot its leases would hand that address out instead.
	seed, err := OpenFileStore(leases)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	seed.Put(t.Context(), Lease{MAC: seedMAC, IP: netip.MustParseAddr("192.0.2.100"), State: StateBound,
		Expires: now.Add(time.Hour), Updated: now})
	seed.Close()

	srv := startServer(t, tp, netnsConfig(), leases)
	// Subtests replace srv; whichever runs last is stopped here, not when
	// the subtest that started it ends.
	t.Cleanup(func() { srv.stop(t) })
	var first netip.Addr

	t.Run("dhclient", func(t *testing.T) {
		needBinary(t, "dhclient", "isc-dhcp-client")
		setClientMAC(t, tp, dhclientMAC)
		first = runDhclient(t, tp, dir, "1")
		if first != netip.MustParseAddr("192.0.2.101") {
			t.Errorf("dhclient got %s, want 192.0.2.101 (first free pool address)", first)
		}
	})

	t.Run("restart keeps leases", func(t *testing.T) {
		if !first.IsValid() {
			t.Skip("dhclient step did not run")
		}
		srv.stop(t)
		srv = startServer(t, tp, netnsConfig(), leases)
		setClientMAC(t, tp, dhclientMAC)
		// A fresh lease file: dhclient DISCOVERs without asking for its
		// old address, so only the server's memory can give it back.
		if again := runDhclient(t, tp, dir, "2"); again != first {
			t.Errorf("after restart dhclient got %s, had %s", again, first)
		}
	})

	t.Run("udhcpc static host", func(t *testing.T) {
		needBinary(t, "busybox", "busybox or busybox-static")
		defer srv.logEvents(t)
		setClientMAC(t, tp, staticMAC)
		if got := runUdhcpc(t, tp, dir); got != netip.MustParseAddr("192.0.2.50") {
			t.Errorf("udhcpc for static host got %s, want 192.0.2.50", got)
		}
	})

	t.Run("relayed", func(t *testing.T) { testRelayed(t, tp) })
	t.Run("pxe", func(t *testing.T) { testPXE(t, tp) })
	t.Run("perfdhcp", func(t *testing.T) { runPerfdhcp(t, tp, srv) })

	t.Run("proxy", func(t *testing.T) {
		srv.stop(t)
		cfg := netnsConfig()
		cfg.Proxy = true
		srv = startServer(t, tp, cfg, filepath.Join(dir, "proxy-leases.jsonl"))
		testProxy(t, tp, srv)
	})
}

var fixedAddr = regexp.MustCompile(`fixed-address ([0-9.]+);`)

// runDhclient runs ISC dhclient until it holds a lease, and returns
// the leased address.
func runDhclient(t *testing.T, tp *topo, dir, tag string) netip.Addr {
	t.Helper()
	lease := nstest.Dhclient(t, tp.cliNS, tp.cliIf, dir, tag, "timeout 15;\ninitial-interval 1;\n", fixedAddr)
	return netip.MustParseAddr(fixedAddr.FindStringSubmatch(lease)[1])
}

func must(b []byte, _ error) []byte { return b }

// runUdhcpc runs busybox's udhcpc with a script that records the lease.
func runUdhcpc(t *testing.T, tp *topo, dir string) netip.Addr {
	t.Helper()
	rec := filepath.Join(dir, "udhcpc.out")
	script := filepath.Join(dir, "udhcpc.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $ip $subnet $router $hostname\" >> "+rec+"\n"), 0o755)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, err := nsCommand(ctx, tp, "busybox", "udhcpc", "-i", tp.cliIf, "-n", "-q", "-f", "-s", script, "-t", "5", "-T", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("udhcpc: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(rec)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "bound" {
			if len(f) < 5 || f[2] != "255.255.255.0" || f[3] != "192.0.2.1" || f[4] != "known1" {
				t.Errorf("udhcpc options: %q", line)
			}
			return netip.MustParseAddr(f[1])
		}
	}
	t.Fatalf("udhcpc bound nothing:\n%s\n%s", data, out)
	return netip.Addr{}
}
