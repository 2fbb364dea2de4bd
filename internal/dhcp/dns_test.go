package dhcp

import (
	"net/netip"
	"slices"
	"testing"
)

func TestDNSServersRackFirst(t *testing.T) {
	a := netip.MustParseAddr
	p := netip.MustParsePrefix("192.0.2.0/24")
	cases := []struct {
		name string
		sn   Subnet
		self netip.Addr
		want []netip.Addr
	}{
		{"allow_dns off", Subnet{CIDR: p, DNS: []netip.Addr{a("198.51.100.53")}}, a("192.0.2.1"), []netip.Addr{a("198.51.100.53")}},
		{"rack first", Subnet{CIDR: p, RackDNS: true, DNS: []netip.Addr{a("198.51.100.53")}}, a("192.0.2.1"), []netip.Addr{a("192.0.2.1"), a("198.51.100.53")}},
		{"rack once", Subnet{CIDR: p, RackDNS: true, DNS: []netip.Addr{a("192.0.2.1"), a("198.51.100.53")}}, a("192.0.2.1"), []netip.Addr{a("192.0.2.1"), a("198.51.100.53")}},
		// a relayed subnet's client reaches the rack through its gateway
		{"relayed with gateway", Subnet{CIDR: netip.MustParsePrefix("198.18.0.0/16"), Gateway: a("198.18.0.1"), RackDNS: true}, a("192.0.2.1"), []netip.Addr{a("192.0.2.1")}},
		{"no gateway, rack outside", Subnet{CIDR: netip.MustParsePrefix("198.18.0.0/16"), RackDNS: true, DNS: []netip.Addr{a("198.18.0.53")}}, a("192.0.2.1"), []netip.Addr{a("198.18.0.53")}},
		{"no server address", Subnet{CIDR: p, RackDNS: true}, netip.Addr{}, nil},
	}
	for _, c := range cases {
		if got := dnsServers(&c.sn, c.self); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestOfferCarriesRackDNSAndSearch(t *testing.T) {
	cfg := testConfig()
	cfg.Subnets[0].DNS = []netip.Addr{netip.MustParseAddr("198.51.100.53")}
	cfg.Subnets[0].RackDNS = true
	cfg.Subnets[0].Search = []string{"maas.test", "example.com"}
	h := newHarness(t, cfg)
	offer, _ := h.send(discover(macN(7)))
	if offer == nil {
		t.Fatalf("no offer: %+v", h.lastEvent())
	}
	var got []string
	for _, ip := range offer.DNS() {
		got = append(got, ip.String())
	}
	if !slices.Equal(got, []string{"192.0.2.1", "198.51.100.53"}) {
		t.Errorf("DNS servers %v", got)
	}
	if s := offer.DomainSearch(); s == nil || !slices.Equal(s.Labels, []string{"maas.test", "example.com"}) {
		t.Errorf("search %v", s)
	}
	cfg.Subnets[0].Search = []string{"bad..name"}
	if _, err := NewServer(cfg, NewMemStore()); err == nil {
		t.Error("a search list with an empty label was taken")
	}
}
