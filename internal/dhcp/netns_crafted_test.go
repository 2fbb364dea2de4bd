package dhcp

import (
	"bytes"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var (
	relayAddr  = net.IPv4(198, 18, 0, 2) // the client side's address, acting as relay
	serverUDP  = &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: dhcpv4.ServerPort}
	bcastUDP   = &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}
	relayPool  = rng("198.18.1.0", "198.18.8.255")
	localPool  = rng("192.0.2.100", "192.0.2.149")
	replyWait  = 3 * time.Second
	silentWait = time.Second
)

// testRelayed plays a relay agent: unicast to the server with giaddr and
// option 82 set, listening on port 67 for the answers.
func testRelayed(t *testing.T, tp *topo) {
	relay := clientConn(t, tp, &net.UDPAddr{IP: relayAddr, Port: dhcpv4.ServerPort})
	rai := dhcpv4.OptRelayAgentInfo(
		dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(1), []byte("swp7")),
		dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(2), []byte("tor1")))
	mods := []dhcpv4.Modifier{dhcpv4.WithGatewayIP(relayAddr), dhcpv4.WithOption(rai)}
	offer, err := exchange(relay, discover(macN(0x77), mods...), serverUDP, replyWait)
	if err != nil {
		t.Fatal(err)
	}
	if ip := addr(offer.YourIPAddr); !relayPool.Contains(ip) {
		t.Errorf("relayed client offered %s, want one from 198.18.0.0/15's pool", ip)
	}
	if got, want := offer.Options.Get(dhcpv4.OptionRelayAgentInformation), rai.Value.ToBytes(); !bytes.Equal(got, want) {
		t.Errorf("option 82 echoed as %v, want %v", got, want)
	}
	ack, err := exchange(relay, requestFor(offer, mods...), serverUDP, replyWait)
	if err != nil || ack.MessageType() != dhcpv4.MessageTypeAck || !ack.YourIPAddr.Equal(offer.YourIPAddr) {
		t.Fatalf("relayed REQUEST: %v %v", ack, err)
	}
	if r := ack.Router(); len(r) != 1 || !r[0].Equal(net.IPv4(198, 18, 0, 1)) {
		t.Errorf("router %v, want the relay subnet's gateway", r)
	}
	// The relay names a disabled subnet with link selection: no answer.
	sel := dhcpv4.OptRelayAgentInfo(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(raiLinkSelection), []byte{198, 51, 100, 0}))
	_, err = exchange(relay, discover(macN(0x78), dhcpv4.WithGatewayIP(relayAddr), dhcpv4.WithOption(sel)), serverUDP, silentWait)
	if !errors.Is(err, errNoReply) {
		t.Errorf("disabled subnet answered: %v", err)
	}
}

// testPXE sends DISCOVERs as each kind of network-booting firmware would.
func testPXE(t *testing.T, tp *topo) {
	c := clientConn(t, tp, &net.UDPAddr{Port: dhcpv4.ClientPort})
	cases := []struct {
		name, vendor string
		arch         int
		user, want   string
	}{
		{"bios", "PXEClient:Arch:00000:UNDI:002001", 0, "", "lpxelinux.0"},
		{"uefi x64", "PXEClient:Arch:00007:UNDI:003016", 7, "", "bootx64.efi"},
		{"uefi arm64", "PXEClient:Arch:00011:UNDI:003000", 11, "", "bootaa64.efi"},
		{"uefi http", "HTTPClient:Arch:00016:UNDI:003001", 16, "", "http://192.0.2.1:5248/bootx64.efi"},
		{"ipxe", "PXEClient:Arch:00000:UNDI:002001", 0, "iPXE", "http://192.0.2.1:5248/ipxe.cfg-52:54:01:00:01:04"},
	}
	for i, tc := range cases {
		mac := macN(0x100 + i)
		offer, err := exchange(c, discover(mac, pxeMods(tc.vendor, tc.arch, tc.user)...), bcastUDP, replyWait)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.name == "ipxe" {
			tc.want = "http://192.0.2.1:5248/ipxe.cfg-" + mac.String()
		}
		if got := offer.BootFileNameOption(); got != tc.want {
			t.Errorf("%s: boot file %q, want %q", tc.name, got, tc.want)
		}
		if !localPool.Contains(addr(offer.YourIPAddr)) || !offer.ServerIPAddr.Equal(net.IPv4(192, 0, 2, 1)) {
			t.Errorf("%s: yiaddr %s siaddr %s", tc.name, offer.YourIPAddr, offer.ServerIPAddr)
		}
		if (tc.vendor[:4] == "HTTP") != (offer.ClassIdentifier() == "HTTPClient") {
			t.Errorf("%s: option 60 %q", tc.name, offer.ClassIdentifier())
		}
	}
}

// testProxy checks proxyDHCP mode end to end: PXE clients get boot info
// and no address, on 67 and on 4011; plain clients get nothing.
func testProxy(t *testing.T, tp *topo, r *running) {
	defer r.logEvents(t)
	c := clientConn(t, tp, &net.UDPAddr{Port: dhcpv4.ClientPort})
	offer, err := exchange(c, discover(macN(0x200), pxeMods("PXEClient:Arch:00000:UNDI:002001", 0, "")...), bcastUDP, replyWait)
	if err != nil {
		t.Fatal(err)
	}
	if addr(offer.YourIPAddr).IsValid() || offer.BootFileNameOption() != "lpxelinux.0" || offer.ClassIdentifier() != "PXEClient" {
		t.Errorf("proxy offer: yiaddr %s file %q vendor %q", offer.YourIPAddr, offer.BootFileNameOption(), offer.ClassIdentifier())
	}
	before := r.srv.Stats().Drops[DropNotPXE]
	if _, err := exchange(c, discover(macN(0x201)), bcastUDP, silentWait); !errors.Is(err, errNoReply) {
		t.Errorf("proxy answered a plain client: %v", err)
	}
	if r.srv.Stats().Drops[DropNotPXE] != before+1 {
		t.Error("plain client's DISCOVER not counted as not_pxe")
	}
	// Boot-server request on 4011, from the address the site's DHCP gave.
	req := msg(dhcpv4.MessageTypeRequest, macN(0x200),
		pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, "", dhcpv4.WithClientIP(relayAddr))...)
	ack, err := exchange(c, req, &net.UDPAddr{IP: serverUDP.IP, Port: PXEPort}, replyWait)
	if err != nil {
		t.Fatalf("4011: %v", err)
	}
	if ack.MessageType() != dhcpv4.MessageTypeAck || ack.BootFileNameOption() != "bootx64.efi" || addr(ack.YourIPAddr).IsValid() {
		t.Errorf("4011 ack: %s file %q yiaddr %s", ack.MessageType(), ack.BootFileNameOption(), ack.YourIPAddr)
	}
	if ls, _ := r.store.List(t.Context()); len(ls) != 0 {
		t.Errorf("proxy mode leased addresses: %v", ls)
	}
}
