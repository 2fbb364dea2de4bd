package rack

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"time"

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
		{MAC: "52:54:00:00:00:06", IP: "192.0.2.1"},                 // the server's own
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

// TestDNSAddrs: bound to every address, the rack offers each of the
// host's usable addresses, the DHCP server's first; bound to one, that
// one; on a port other than 53, or on loopback, none (no client can use
// it).
func TestDNSAddrs(t *testing.T) {
	udp := func(s string) net.Addr { return net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s)) }
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	host := addrs("198.51.100.1", "192.0.2.1", "127.0.0.1", "fe80::1", "2001:db8::1", "::ffff:198.18.0.1")
	dhcpIP := netip.MustParseAddr("192.0.2.1")
	cases := []struct {
		addr   net.Addr
		dhcpIP netip.Addr
		want   []netip.Addr
	}{
		{udp("0.0.0.0:53"), dhcpIP, addrs("192.0.2.1", "198.51.100.1", "198.18.0.1")},
		{udp("[::]:53"), netip.Addr{}, addrs("198.51.100.1", "192.0.2.1", "2001:db8::1", "198.18.0.1")},
		{udp("198.51.100.1:53"), dhcpIP, addrs("198.51.100.1")},
		{udp("0.0.0.0:5353"), dhcpIP, nil},
		{udp("127.0.0.1:53"), dhcpIP, nil},
		{nil, dhcpIP, nil},
	}
	for _, c := range cases {
		if got := dnsAddrs(c.addr, c.dhcpIP, host); !reflect.DeepEqual(got, c.want) {
			t.Errorf("dnsAddrs(%v, %v) = %v, want %v", c.addr, c.dhcpIP, got, c.want)
		}
	}
	// A status report's addresses: those of interfaces that are up.
	ifs := []StatusInterface{{Name: "eth0", Up: true, Addresses: []string{"192.0.2.1/24", "fe80::1/64"}},
		{Name: "eth1", Up: false, Addresses: []string{"203.0.113.1/24"}}}
	if got := statusAddrs(ifs); !reflect.DeepEqual(got, addrs("192.0.2.1", "fe80::1")) {
		t.Errorf("statusAddrs = %v", got)
	}
}

// TestReportable: a rack reports its bound, running leases on subnets
// whose VLAN names a primary rack, and only those.
func TestReportable(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mac := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	pfx := netip.MustParsePrefix
	ls := []dhcp.Lease{
		{MAC: mac("52:54:00:00:00:01"), IP: netip.MustParseAddr("192.0.2.100"), Subnet: pfx("192.0.2.0/24"), State: dhcp.StateBound, Expires: now.Add(time.Hour)},
		{MAC: mac("52:54:00:00:00:02"), IP: netip.MustParseAddr("192.0.2.101"), Subnet: pfx("192.0.2.0/24"), State: dhcp.StateOffered, Expires: now.Add(time.Minute)},
		{MAC: mac("52:54:00:00:00:03"), IP: netip.MustParseAddr("192.0.2.102"), Subnet: pfx("192.0.2.0/24"), State: dhcp.StateBound, Expires: now.Add(-time.Second)},
		{MAC: mac("52:54:00:00:00:04"), IP: netip.MustParseAddr("192.0.2.103"), Subnet: pfx("192.0.2.0/24"), State: dhcp.StateReleased, Expires: now},
		{MAC: mac("52:54:00:00:00:05"), IP: netip.MustParseAddr("198.51.100.5"), Subnet: pfx("198.51.100.0/24"), State: dhcp.StateBound, Expires: now.Add(time.Hour)},
		{MAC: mac("52:54:00:00:00:06"), IP: netip.MustParseAddr("198.18.0.6"), Subnet: pfx("198.18.0.0/15"), State: dhcp.StateBound, Expires: now.Add(time.Hour)},
	}
	subnets := []Subnet{{CIDR: "192.0.2.0/24", Role: "primary"}, {CIDR: "198.51.100.0/24"}, {CIDR: "198.18.0.0/15", Role: "bystander"}}
	got := reportable(ls, subnets, now)
	want := []Lease{
		{MAC: "52:54:00:00:00:01", IP: "192.0.2.100", Subnet: "192.0.2.0/24", Expires: now.Add(time.Hour)},
		{MAC: "52:54:00:00:00:06", IP: "198.18.0.6", Subnet: "198.18.0.0/15", Expires: now.Add(time.Hour)}, // a former secondary's clients still count
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reportable:\n got %+v\nwant %+v", got, want)
	}
	// And back: what the other rack is streamed becomes its server's.
	back := peerLeases(append(got, Lease{MAC: "junk", IP: "192.0.2.9", Subnet: "192.0.2.0/24"}))
	if len(back) != 2 || back[0].MAC.String() != "52:54:00:00:00:01" || back[0].State != dhcp.StateBound || !back[0].Active(now) {
		t.Fatalf("peer leases: %+v", back)
	}
}
