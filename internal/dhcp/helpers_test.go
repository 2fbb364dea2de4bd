package dhcp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var (
	srvIP     = netip.MustParseAddr("192.0.2.1")
	relayIP   = netip.MustParseAddr("198.51.100.2")
	staticMAC = mustMAC("52:54:00:00:00:50")
)

func mustMAC(s string) net.HardwareAddr {
	m, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return m
}

func macN(n int) net.HardwareAddr {
	return net.HardwareAddr{0x52, 0x54, 0x01, byte(n >> 16), byte(n >> 8), byte(n)}
}

func rng(a, b string) Range {
	return Range{netip.MustParseAddr(a), netip.MustParseAddr(b)}
}

// testConfig is the site every test uses: a local /24 with a pool, a
// reserved hole and a static host; a relayed /24; a disabled network.
func testConfig() Config {
	return Config{
		ServerIP: srvIP,
		Subnets: []Subnet{{
			CIDR: netip.MustParsePrefix("192.0.2.0/24"), Gateway: srvIP,
			DNS: []netip.Addr{srvIP}, DomainName: "maas.test",
			Dynamic:  []Range{rng("192.0.2.100", "192.0.2.149")},
			Reserved: []Range{rng("192.0.2.120", "192.0.2.125")},
			Enabled:  true, LeaseTime: 10 * time.Minute,
		}, {
			CIDR:    netip.MustParsePrefix("198.51.100.0/24"),
			Gateway: netip.MustParseAddr("198.51.100.1"),
			Dynamic: []Range{rng("198.51.100.100", "198.51.100.110")},
			Enabled: true,
		}, {
			CIDR:    netip.MustParsePrefix("198.18.0.0/16"),
			Dynamic: []Range{rng("198.18.1.0", "198.18.1.255")},
		}},
		Hosts: []StaticHost{{MAC: staticMAC, IP: netip.MustParseAddr("192.0.2.50"), Hostname: "known1"}},
	}
}

// fakeClock is a settable time source.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type harness struct {
	t      *testing.T
	s      *Server
	store  LeaseStore
	clock  *fakeClock
	mu     sync.Mutex
	events []Event
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, store: NewMemStore(), clock: &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}}
	s, err := NewServer(cfg, h.store, WithClock(h.clock.Now),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		WithObserver(func(e Event) { h.mu.Lock(); h.events = append(h.events, e); h.mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	return h
}

// send runs a request through the server as if it arrived on the
// 192.0.2.1 interface at port 67; it returns the parsed reply or nil.
func (h *harness) send(req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	return h.sendOn(req, dhcpv4.ServerPort, &net.UDPAddr{IP: net.IPv4zero, Port: 68})
}

func (h *harness) sendOn(req *dhcpv4.DHCPv4, port int, peer *net.UDPAddr) (*dhcpv4.DHCPv4, *net.UDPAddr) {
	h.t.Helper()
	out, dst := h.s.Handle(context.Background(), Packet{Data: req.ToBytes(), Peer: peer, LocalPort: port,
		Iface: []netip.Addr{srvIP, netip.MustParseAddr("198.51.100.1")}})
	if out == nil {
		return nil, nil
	}
	resp, err := dhcpv4.FromBytes(out)
	if err != nil {
		h.t.Fatalf("server sent unparseable reply: %v", err)
	}
	return resp, dst
}

func (h *harness) lastEvent() Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return Event{}
	}
	return h.events[len(h.events)-1]
}

func discover(mac net.HardwareAddr, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	d, err := dhcpv4.NewDiscovery(mac, mods...)
	if err != nil {
		panic(err)
	}
	return d
}

// requestFor builds the SELECTING-state REQUEST answering offer.
func requestFor(offer *dhcpv4.DHCPv4, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	r, err := dhcpv4.NewRequestFromOffer(offer, mods...)
	if err != nil {
		panic(err)
	}
	return r
}

func msg(mt dhcpv4.MessageType, mac net.HardwareAddr, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	all := append([]dhcpv4.Modifier{dhcpv4.WithMessageType(mt), dhcpv4.WithHwAddr(mac)}, mods...)
	d, err := dhcpv4.New(all...)
	if err != nil {
		panic(err)
	}
	return d
}

// dora runs DISCOVER/OFFER/REQUEST/ACK and returns the acked address.
func (h *harness) dora(mac net.HardwareAddr, mods ...dhcpv4.Modifier) netip.Addr {
	h.t.Helper()
	offer, _ := h.send(discover(mac, mods...))
	if offer == nil || offer.MessageType() != dhcpv4.MessageTypeOffer {
		h.t.Fatalf("no offer for %s: %+v", mac, h.lastEvent())
	}
	ack, _ := h.send(requestFor(offer, mods...))
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck {
		h.t.Fatalf("no ack for %s: %+v", mac, h.lastEvent())
	}
	return addr(ack.YourIPAddr)
}
