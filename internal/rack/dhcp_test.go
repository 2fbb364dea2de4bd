package rack

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/anvilmetal/anvil/internal/dhcp"
)

// TestDHCPConfigHosts: the region's fixed leases become the DHCP server's
// static hosts, keeping only what it accepts (IPv4 inside the subnet,
// one per MAC and address), so one bad row cannot stop DHCP.
func TestDHCPConfigHosts(t *testing.T) {
	subnets := []Subnet{{CIDR: "192.0.2.0/24", DHCP: true, Hosts: []Host{
		{MAC: "52:54:00:00:00:01", IP: "192.0.2.10", Hostname: "a"},
		{MAC: "52:54:00:00:00:01", IP: "192.0.2.11"},                // second address of one MAC
		{MAC: "52:54:00:00:00:02", IP: "192.0.2.10"},                // another MAC, same address
		{MAC: "52:54:00:00:00:03", IP: "198.51.100.5"},              // outside the subnet
		{MAC: "52:54:00:00:00:04", IP: "2001:db8::4"},               // IPv6
		{MAC: "not-a-mac", IP: "192.0.2.12"},                        // junk
		{MAC: "52:54:00:00:00:05", IP: "192.0.2.13", Hostname: "b"}, // fine
	}}}
	cfg := dhcpConfig(subnets, netip.MustParseAddr("192.0.2.1"), "", dhcp.BootFiles{}, false, false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(cfg.Hosts) != 2 || cfg.Hosts[0].IP.String() != "192.0.2.10" || cfg.Hosts[0].Hostname != "a" ||
		cfg.Hosts[1].MAC.String() != "52:54:00:00:00:05" {
		t.Fatalf("hosts: %+v", cfg.Hosts)
	}
	if _, err := dhcp.NewServer(cfg, dhcp.NewMemStore()); err != nil {
		t.Fatalf("the server refuses the configuration: %v", err)
	}
}

func TestServesDNSAt(t *testing.T) {
	udp := func(s string) net.Addr { return net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s)) }
	ip := netip.MustParseAddr("192.0.2.1")
	cases := []struct {
		addr net.Addr
		ip   netip.Addr
		want bool
	}{
		{nil, ip, false},
		{udp("0.0.0.0:53"), ip, true},
		{udp("[::]:53"), netip.Addr{}, true},
		{udp("192.0.2.1:53"), ip, true},
		{udp("192.0.2.1:5353"), ip, false}, // a client cannot be told the port
		{udp("127.0.0.1:53"), ip, false},
		{udp("192.0.2.1:53"), netip.Addr{}, false},
	}
	for _, c := range cases {
		if got := servesDNSAt(c.addr, c.ip); got != c.want {
			t.Errorf("servesDNSAt(%v, %v) = %v", c.addr, c.ip, got)
		}
	}
}
