package dhcp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// FuzzHandle feeds arbitrary datagrams through parsing and the whole
// chain, in full and proxy mode, on port 67 and 4011. Whatever arrives,
// the server must not panic, and anything it sends must parse back.
//
//	go test ./internal/dhcp -run '^$' -fuzz FuzzHandle -fuzztime 30s
func FuzzHandle(f *testing.F) {
	rai := dhcpv4.OptRelayAgentInfo(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(raiLinkSelection), []byte{198, 51, 100, 9}))
	seeds := []*dhcpv4.DHCPv4{
		discover(macN(1)),
		discover(staticMAC),
		discover(macN(2), pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, "iPXE")...),
		discover(macN(3), pxeMods("HTTPClient:Arch:00016", 16, "")...),
		discover(macN(4), dhcpv4.WithGatewayIP(relayIP.AsSlice()), dhcpv4.WithOption(rai)),
		msg(dhcpv4.MessageTypeRequest, macN(1), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 100)))),
		msg(dhcpv4.MessageTypeRelease, macN(1), dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 100))),
		msg(dhcpv4.MessageTypeDecline, macN(1), dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 0, 2, 100)))),
		msg(dhcpv4.MessageTypeInform, macN(1), dhcpv4.WithClientIP(net.IPv4(192, 0, 2, 7))),
	}
	for _, s := range seeds {
		f.Add(s.ToBytes(), uint8(0))
	}
	f.Add([]byte{1, 1, 6, 0}, uint8(3))
	// Mode bit 4 puts data behind a valid fixed header and magic cookie,
	// so mutations explore the options rather than die in the header.
	header := discover(macN(5)).ToBytes()[:240]
	f.Add([]byte{53, 1, 1, 60, 9, 'P', 'X', 'E', 'C', 'l', 'i', 'e', 'n', 't', 93, 2, 0, 7, 255}, uint8(4))
	f.Add([]byte{53, 1, 3, 50, 4, 192, 0, 2, 100, 54, 4, 192, 0, 2, 1, 82, 6, 5, 4, 198, 51, 100, 1, 255}, uint8(4))

	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	full, err := NewServer(testConfig(), NewMemStore(), quiet)
	if err != nil {
		f.Fatal(err)
	}
	pcfg := testConfig()
	pcfg.Proxy = true
	proxy, err := NewServer(pcfg, NewMemStore(), quiet)
	if err != nil {
		f.Fatal(err)
	}
	iface := []netip.Addr{srvIP}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if mode&4 != 0 {
			data = append(append([]byte(nil), header...), data...)
		}
		s := full
		if mode&1 != 0 {
			s = proxy
		}
		port := dhcpv4.ServerPort
		if mode&2 != 0 {
			port = PXEPort
		}
		peer := &net.UDPAddr{IP: net.IPv4(192, 0, 2, 77), Port: 68}
		out, dst := s.Handle(context.Background(), Packet{Data: data, Peer: peer, LocalPort: port, Iface: iface})
		if out == nil {
			return
		}
		if dst == nil {
			t.Fatal("reply without destination")
		}
		if _, err := dhcpv4.FromBytes(out); err != nil {
			t.Fatalf("unparseable reply: %v", err)
		}
	})
}
