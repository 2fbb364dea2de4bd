package dhcp

import (
	"bytes"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

func TestDORAGivesPoolAddressAndOptions(t *testing.T) {
	h := newHarness(t, testConfig())
	mac := macN(1)
	offer, dst := h.send(discover(mac))
	if offer == nil {
		t.Fatalf("no offer: %+v", h.lastEvent())
	}
	if got := addr(offer.YourIPAddr); got != netip.MustParseAddr("192.0.2.100") {
		t.Errorf("offered %s, want first pool address 192.0.2.100", got)
	}
	if !dst.IP.Equal(net.IPv4bcast) || dst.Port != 68 {
		t.Errorf("offer to %s, want broadcast:68 (client has no address)", dst)
	}
	if got := addr(offer.ServerIdentifier()); got != srvIP {
		t.Errorf("server id %s", got)
	}
	if offer.IPAddressLeaseTime(0) != 10*time.Minute || offer.DomainName() != "maas.test" {
		t.Errorf("lease time %s domain %q", offer.IPAddressLeaseTime(0), offer.DomainName())
	}
	if r := offer.Router(); len(r) != 1 || !r[0].Equal(srvIP.AsSlice()) {
		t.Errorf("router %v", r)
	}
	if offer.BootFileName != "" || offer.Options.Has(dhcpv4.OptionBootfileName) {
		t.Errorf("plain client got boot file %q", offer.BootFileName)
	}
	ack, _ := h.send(requestFor(offer))
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck || !ack.YourIPAddr.Equal(offer.YourIPAddr) {
		t.Fatalf("ack %v event %+v", ack, h.lastEvent())
	}
	l, ok, _ := h.store.Get(t.Context(), mac)
	if !ok || l.State != StateBound || l.IP != addr(ack.YourIPAddr) {
		t.Errorf("stored lease %+v", l)
	}
	st := h.s.Stats()
	if st.Offers != 1 || st.Acks != 1 || st.Received != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestStaticHostGetsReservedAddress(t *testing.T) {
	h := newHarness(t, testConfig())
	offer, _ := h.send(discover(staticMAC))
	if got := addr(offer.YourIPAddr); got != netip.MustParseAddr("192.0.2.50") {
		t.Fatalf("static host offered %s", got)
	}
	if offer.HostName() != "known1" {
		t.Errorf("hostname %q", offer.HostName())
	}
	if e := h.lastEvent(); !e.Static {
		t.Errorf("event not marked static: %+v", e)
	}
	// Asking for another address is refused: the host has a fixed one.
	other := msg(dhcpv4.MessageTypeRequest, staticMAC,
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 101))))
	if nak, _ := h.send(other); nak == nil || nak.MessageType() != dhcpv4.MessageTypeNak {
		t.Errorf("static host requesting a pool address: %v", nak)
	}
	// And nobody else may take the reserved address.
	steal := msg(dhcpv4.MessageTypeRequest, macN(9),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 50))))
	if nak, _ := h.send(steal); nak == nil || nak.MessageType() != dhcpv4.MessageTypeNak {
		t.Errorf("other client requesting the static address: %v", nak)
	}
}

func TestReturningClientGetsSameAddress(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.dora(macN(1))
	b := h.dora(macN(2))
	// Release, then let the lease lapse entirely; others come and go.
	rel := msg(dhcpv4.MessageTypeRelease, macN(1), dhcpv4.WithClientIP(a.AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(srvIP.AsSlice())))
	if r, _ := h.send(rel); r != nil || h.lastEvent().Kind != EventRelease {
		t.Fatalf("release answered %v / %+v", r, h.lastEvent())
	}
	h.clock.Add(time.Hour)
	c := h.dora(macN(3))
	if c == a {
		t.Errorf("new client took the released address %s while fresh ones were free", a)
	}
	if again := h.dora(macN(1)); again != a {
		t.Errorf("returning client got %s, had %s", again, a)
	}
	if b == a {
		t.Error("two clients share an address")
	}
}

func TestReservedRangesAreSkipped(t *testing.T) {
	cfg := testConfig()
	cfg.Subnets[0].Dynamic = []Range{rng("192.0.2.120", "192.0.2.127")}
	h := newHarness(t, cfg)
	if got := h.dora(macN(1)); got != netip.MustParseAddr("192.0.2.126") {
		t.Errorf("got %s, want 192.0.2.126 (120-125 reserved)", got)
	}
}

// TestLastAddressRace has many clients race for a one-address pool: the
// offer hold must let exactly one of them have it.
func TestLastAddressRace(t *testing.T) {
	cfg := testConfig()
	cfg.Subnets[0].Dynamic = []Range{rng("192.0.2.100", "192.0.2.100")}
	h := newHarness(t, cfg)
	var wg sync.WaitGroup
	var mu sync.Mutex
	offers := 0
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, _ := h.send(discover(macN(100 + i))); r != nil {
				mu.Lock()
				offers++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if offers != 1 {
		t.Fatalf("%d offers for one address", offers)
	}
	if d := h.s.Stats().Drops[DropPoolFull]; d != 31 {
		t.Errorf("pool_exhausted drops %d, want 31", d)
	}
	// Once the hold lapses unclaimed, the address is free again.
	h.clock.Add(time.Minute)
	if got := h.dora(macN(999)); got != netip.MustParseAddr("192.0.2.100") {
		t.Errorf("after hold expiry got %s", got)
	}
}

func TestRelayedRequestUsesRelaySubnetAndEchoesOption82(t *testing.T) {
	h := newHarness(t, testConfig())
	rai := dhcpv4.OptRelayAgentInfo(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(1), []byte("port7")))
	relay := []dhcpv4.Modifier{dhcpv4.WithGatewayIP(relayIP.AsSlice()), dhcpv4.WithOption(rai)}
	offer, dst := h.send(discover(macN(1), relay...))
	if offer == nil {
		t.Fatalf("no offer: %+v", h.lastEvent())
	}
	if got := addr(offer.YourIPAddr); got != netip.MustParseAddr("198.51.100.100") {
		t.Errorf("relayed client offered %s", got)
	}
	if !dst.IP.Equal(relayIP.AsSlice()) || dst.Port != 67 {
		t.Errorf("reply to %s, want relay 198.51.100.2:67", dst)
	}
	if !bytes.Equal(offer.Options.Get(dhcpv4.OptionRelayAgentInformation), rai.Value.ToBytes()) {
		t.Errorf("option 82 not echoed: %v", offer.Options.Get(dhcpv4.OptionRelayAgentInformation))
	}
	if e := h.lastEvent(); e.Relay != relayIP || e.Subnet.String() != "198.51.100.0/24" {
		t.Errorf("event %+v", e)
	}
	if !addr(offer.GatewayIPAddr).IsValid() {
		t.Error("giaddr not kept in reply")
	}

	// A relay on a disabled subnet, and one on an unknown network.
	for giaddr, reason := range map[string]string{"198.18.0.1": DropDisabled, "198.19.0.1": DropNoSubnet} {
		r, _ := h.send(discover(macN(2), dhcpv4.WithGatewayIP(net.ParseIP(giaddr))))
		if r != nil || h.lastEvent().Reason != reason {
			t.Errorf("giaddr %s: reply %v event %+v, want drop %s", giaddr, r, h.lastEvent(), reason)
		}
	}
}

func TestRequestNaks(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.dora(macN(1))
	cases := map[string]*dhcpv4.DHCPv4{
		"outside pool": msg(dhcpv4.MessageTypeRequest, macN(2),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 200)))),
		"wrong network": msg(dhcpv4.MessageTypeRequest, macN(2),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(198, 51, 100, 100)))),
		"someone else's": msg(dhcpv4.MessageTypeRequest, macN(2),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(a.AsSlice()))),
		"reserved": msg(dhcpv4.MessageTypeRequest, macN(2),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 121)))),
	}
	for name, req := range cases {
		nak, dst := h.send(req)
		if nak == nil || nak.MessageType() != dhcpv4.MessageTypeNak {
			t.Errorf("%s: got %v", name, nak)
			continue
		}
		if addr(nak.YourIPAddr).IsValid() || !dst.IP.Equal(net.IPv4bcast) || nak.Options.Has(dhcpv4.OptionIPAddressLeaseTime) {
			t.Errorf("%s: NAK yiaddr %s dst %s", name, nak.YourIPAddr, dst)
		}
	}
	// INIT-REBOOT for a free pool address is granted (authoritative).
	ok, _ := h.send(msg(dhcpv4.MessageTypeRequest, macN(3),
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 140)))))
	if ok == nil || ok.MessageType() != dhcpv4.MessageTypeAck {
		t.Errorf("init-reboot for free address: %v", ok)
	}
	// RENEWING: ciaddr set, unicast reply to it.
	ren, dst := h.send(msg(dhcpv4.MessageTypeRequest, macN(1), dhcpv4.WithClientIP(a.AsSlice())))
	if ren == nil || ren.MessageType() != dhcpv4.MessageTypeAck || !dst.IP.Equal(a.AsSlice()) {
		t.Errorf("renew: %v to %s", ren, dst)
	}
}

func TestRequestForOtherServerFreesOffer(t *testing.T) {
	cfg := testConfig()
	cfg.Subnets[0].Dynamic = []Range{rng("192.0.2.100", "192.0.2.100")}
	h := newHarness(t, cfg)
	offer, _ := h.send(discover(macN(1)))
	req := requestFor(offer, dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 0, 2, 99))))
	if r, _ := h.send(req); r != nil || h.lastEvent().Reason != DropOtherServer {
		t.Fatalf("got %v %+v", r, h.lastEvent())
	}
	if r, _ := h.send(discover(macN(2))); r == nil {
		t.Error("held offer was not released when its client chose another server")
	}
}

func TestDeclineQuarantinesAddress(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.dora(macN(1))
	dec := msg(dhcpv4.MessageTypeDecline, macN(1), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(a.AsSlice())),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(srvIP.AsSlice())))
	if r, _ := h.send(dec); r != nil || h.lastEvent().Kind != EventDecline {
		t.Fatalf("decline: %v %+v", r, h.lastEvent())
	}
	if b := h.dora(macN(1)); b == a {
		t.Errorf("declined address %s handed out again", a)
	}
	if _, ok, _ := h.store.FindByIP(t.Context(), a); ok {
		t.Error("declined lease still stored")
	}
}

func TestInform(t *testing.T) {
	h := newHarness(t, testConfig())
	ci := net.IPv4(192, 0, 2, 7)
	ack, dst := h.send(msg(dhcpv4.MessageTypeInform, macN(1), dhcpv4.WithClientIP(ci)))
	if ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatalf("inform: %v", ack)
	}
	if addr(ack.YourIPAddr).IsValid() || ack.Options.Has(dhcpv4.OptionIPAddressLeaseTime) || !dst.IP.Equal(ci) {
		t.Errorf("inform ack yiaddr %s lease %v dst %s", ack.YourIPAddr, ack.Options.Has(dhcpv4.OptionIPAddressLeaseTime), dst)
	}
}

func TestReconfigureWhileServing(t *testing.T) {
	h := newHarness(t, testConfig())
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cfg := testConfig()
			cfg.Subnets[0].LeaseTime = time.Duration(1+i%5) * time.Minute
			if err := h.s.Reconfigure(cfg); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 200 {
		h.send(discover(macN(i % 40)))
	}
	close(stop)
	wg.Wait()

	cfg := testConfig()
	cfg.Subnets[0].Enabled = false
	if err := h.s.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	if r, _ := h.send(discover(macN(1))); r != nil || h.lastEvent().Reason != DropDisabled {
		t.Errorf("disabled subnet answered: %+v", h.lastEvent())
	}
	bad := testConfig()
	bad.Subnets[1].CIDR = netip.MustParsePrefix("192.0.2.128/25")
	if err := h.s.Reconfigure(bad); err == nil {
		t.Error("overlapping subnets accepted")
	}
	if h.s.Config().Subnets[0].Enabled {
		t.Error("rejected config replaced the running one")
	}
}

func TestStaticReservationHeldByAnotherClient(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.dora(macN(1))
	// The operator pins a's address to a different machine while macN(1)
	// still holds it: the static host is told nothing rather than given
	// an address it would be NAKed on.
	cfg := testConfig()
	cfg.Hosts = append(cfg.Hosts, StaticHost{MAC: macN(2), IP: a})
	if err := h.s.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	if r, _ := h.send(discover(macN(2))); r != nil || h.lastEvent().Reason != DropStaticInUse {
		t.Errorf("got %v %+v", r, h.lastEvent())
	}
	// Once the old lease lapses the host gets its address.
	h.clock.Add(time.Hour)
	if got := h.dora(macN(2)); got != a {
		t.Errorf("static host got %s, want %s", got, a)
	}
}
