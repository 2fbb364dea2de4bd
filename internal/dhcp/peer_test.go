package dhcp

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// peerConfig is the primary's half of a range split with a partner: it
// hands out .100-.149, the partner .150-.199.
func peerConfig() Config {
	cfg := testConfig()
	cfg.Subnets[0].Dynamic = []Range{rng("192.0.2.100", "192.0.2.149")}
	cfg.Subnets[0].Reserved = nil
	cfg.Subnets[0].Peer = []Range{rng("192.0.2.150", "192.0.2.199")}
	return cfg
}

// withPeers is a harness whose partner leased .150 to client 1, .101 (of
// this server's share: it confirmed the lease while this one was away)
// to client 2, and .151 to client 3, whose lease ran out.
func withPeers(t *testing.T, cfg Config) *harness {
	h := newHarness(t, cfg)
	now := h.clock.Now()
	h.s.SetPeerLeases([]Lease{
		{MAC: macN(1), IP: netip.MustParseAddr("192.0.2.150"), State: StateBound, Expires: now.Add(time.Hour)},
		{MAC: macN(2), IP: netip.MustParseAddr("192.0.2.101"), State: StateBound, Expires: now.Add(time.Hour)},
		{MAC: macN(3), IP: netip.MustParseAddr("192.0.2.151"), State: StateBound, Expires: now.Add(-time.Minute)},
	})
	return h
}

func ip4(s string) net.IP { return net.ParseIP(s).To4() }

// TestPartnerShare: what a server sharing a subnet with a partner answers
// for addresses of either share.
func TestPartnerShare(t *testing.T) {
	initReboot := func(mac net.HardwareAddr, ip string) *dhcpv4.DHCPv4 {
		return msg(dhcpv4.MessageTypeRequest, mac, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(ip4(ip))))
	}
	rebind := func(mac net.HardwareAddr, ip string) *dhcpv4.DHCPv4 {
		return msg(dhcpv4.MessageTypeRequest, mac, dhcpv4.WithClientIP(ip4(ip)))
	}
	cases := []struct {
		name string
		req  *dhcpv4.DHCPv4
		kind EventKind
		ip   string // offered or acked
		why  string // drop reason or NAK text
	}{
		{"partner's client reboots", initReboot(macN(1), "192.0.2.150"), EventAck, "192.0.2.150", ""},
		{"partner's client rebinds", rebind(macN(1), "192.0.2.150"), EventAck, "192.0.2.150", ""},
		{"partner's client asks anew", discover(macN(1)), EventOffer, "192.0.2.150", ""},
		{"partner's address, unknown client", initReboot(macN(4), "192.0.2.160"), EventDrop, "", DropPeerUnknown},
		{"partner's address, another client's", rebind(macN(4), "192.0.2.150"), EventDrop, "", DropPeerUnknown},
		{"partner's lease ran out", initReboot(macN(3), "192.0.2.151"), EventDrop, "", DropPeerUnknown},
		{"own address the partner confirmed", initReboot(macN(2), "192.0.2.101"), EventAck, "192.0.2.101", ""},
		{"own address the partner holds for another", initReboot(macN(4), "192.0.2.101"), EventNak, "", "address not available"},
		{"new client never offered the partner's", discover(macN(5), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(ip4("192.0.2.160")))), EventOffer, "192.0.2.100", ""},
		{"static host in the partner's share", initReboot(staticMAC, "192.0.2.50"), EventAck, "192.0.2.50", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := withPeers(t, peerConfig())
			resp, _ := h.send(c.req)
			e := h.lastEvent()
			if e.Kind != c.kind || (c.why != "" && !strings.Contains(e.Reason, c.why)) {
				t.Fatalf("event %+v, want %s %s", e, c.kind, c.why)
			}
			if c.kind == EventDrop {
				if resp != nil {
					t.Fatalf("a reply to a request the partner owns: %v", resp)
				}
				return
			}
			if c.ip != "" && addr(resp.YourIPAddr) != netip.MustParseAddr(c.ip) {
				t.Fatalf("yiaddr %s, want %s", resp.YourIPAddr, c.ip)
			}
			if c.kind == EventAck {
				// The lease is this server's now: it reports it, and
				// renews it for the client.
				l, ok, _ := h.store.Get(t.Context(), c.req.ClientHWAddr)
				if !ok || l.State != StateBound || l.IP != netip.MustParseAddr(c.ip) {
					t.Fatalf("stored %+v", l)
				}
			}
		})
	}
}

// TestPartnerShareNeverOffered: with its own share used up, a server
// drops new clients rather than offer the partner's addresses, and skips
// an own address the partner holds for another client.
func TestPartnerShareNeverOffered(t *testing.T) {
	cfg := peerConfig()
	cfg.Subnets[0].Dynamic = []Range{rng("192.0.2.100", "192.0.2.102")}
	h := withPeers(t, cfg)
	for i, want := range []string{"192.0.2.100", "192.0.2.102"} {
		if got := h.dora(macN(10 + i)); got != netip.MustParseAddr(want) {
			t.Fatalf("client %d got %s, want %s", i, got, want)
		}
	}
	if resp, _ := h.send(discover(macN(20))); resp != nil || h.lastEvent().Reason != DropPoolFull {
		t.Fatalf("offer %v with the own share used up: %+v", resp, h.lastEvent())
	}
	// Once the partner's lease of .101 lapses, it is this server's again.
	h.clock.Add(2 * time.Hour)
	if got := h.dora(macN(20)); got != netip.MustParseAddr("192.0.2.101") {
		t.Fatalf("after the partner's lease ran out: %s", got)
	}
}

func TestPartnerRangeOverlapRefused(t *testing.T) {
	cfg := peerConfig()
	cfg.Subnets[0].Peer = []Range{rng("192.0.2.149", "192.0.2.199")}
	if _, err := NewServer(cfg, NewMemStore()); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("overlapping shares accepted: %v", err)
	}
}
