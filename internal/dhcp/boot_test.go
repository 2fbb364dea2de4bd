package dhcp

import (
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

func pxeMods(vendor string, arch int, user string, extra ...dhcpv4.Modifier) []dhcpv4.Modifier {
	var m []dhcpv4.Modifier
	if vendor != "" {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptClassIdentifier(vendor)))
	}
	if arch >= 0 {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptClientArch(iana.Arch(arch))))
	}
	if user != "" {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptUserClass(user)))
	}
	return append(m, extra...)
}

func TestBootFileByClient(t *testing.T) {
	ipxe175 := dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(optIPXE), []byte{1, 1, 1})
	mac := macN(7)
	cases := []struct {
		name, want string
		mods       []dhcpv4.Modifier
		http       bool
	}{
		{"bios", "lpxelinux.0", pxeMods("PXEClient:Arch:00000:UNDI:002001", 0, ""), false},
		{"efi bc", "bootx64.efi", pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, ""), false},
		{"efi x64", "bootx64.efi", pxeMods("PXEClient:Arch:00009:UNDI:003016", 9, ""), false},
		{"arch only in vendor class", "bootx64.efi", pxeMods("PXEClient:Arch:00007:UNDI:003016", -1, ""), false},
		{"arm64", "bootaa64.efi", pxeMods("PXEClient:Arch:00011:UNDI:003000", 11, ""), false},
		{"http x64", "http://192.0.2.1:5248/bootx64.efi", pxeMods("HTTPClient:Arch:00016:UNDI:003001", 16, ""), true},
		{"http arm64", "http://192.0.2.1:5248/bootaa64.efi", pxeMods("HTTPClient:Arch:00019:UNDI:003001", 19, ""), true},
		{"ipxe user class", "http://192.0.2.1:5248/ipxe.cfg-" + mac.String(), pxeMods("PXEClient:Arch:00000:UNDI:002001", 0, "iPXE"), false},
		{"ipxe option 175", "http://192.0.2.1:5248/ipxe.cfg-" + mac.String(), pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, "", ipxe175), false},
		{"plain client", "", nil, false},
		{"unknown arch", "", pxeMods("PXEClient:Arch:00002:UNDI:002001", 2, ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			for _, offerOrAck := range []bool{true, false} {
				var r *dhcpv4.DHCPv4
				if offerOrAck {
					r, _ = h.send(discover(mac, tc.mods...))
				} else {
					offer, _ := h.send(discover(mac, tc.mods...))
					r, _ = h.send(requestFor(offer, tc.mods...))
				}
				if r == nil || !addr(r.YourIPAddr).IsValid() {
					t.Fatalf("no address: %v %+v", r, h.lastEvent())
				}
				if got := r.BootFileNameOption(); got != tc.want || r.BootFileName != tc.want {
					t.Errorf("option 67 %q file %q, want %q", got, r.BootFileName, tc.want)
				}
				if tc.want != "" && (!r.ServerIPAddr.Equal(srvIP.AsSlice()) || r.TFTPServerName() != "192.0.2.1") {
					t.Errorf("siaddr %s option 66 %q", r.ServerIPAddr, r.TFTPServerName())
				}
				if got := r.ClassIdentifier() == "HTTPClient"; got != tc.http {
					t.Errorf("option 60 %q", r.ClassIdentifier())
				}
				if r.Options.Has(dhcpv4.OptionVendorSpecificInformation) {
					t.Error("option 43 sent outside proxy mode")
				}
				if e := h.lastEvent(); e.BootFile != tc.want {
					t.Errorf("event boot file %q", e.BootFile)
				}
			}
		})
	}
}

func TestBootFilesConfigurable(t *testing.T) {
	cfg := testConfig()
	cfg.NextServer = srvIP.Next()
	cfg.Boot = BootFiles{BIOS: "undionly.kpxe", IPXE: "http://{server}:8080/boot/{mac}.ipxe"}
	h := newHarness(t, cfg)
	r, _ := h.send(discover(macN(1), pxeMods("PXEClient", 0, "")...))
	if r.BootFileNameOption() != "undionly.kpxe" || !r.ServerIPAddr.Equal(net.IPv4(192, 0, 2, 2)) {
		t.Errorf("file %q siaddr %s", r.BootFileNameOption(), r.ServerIPAddr)
	}
	r, _ = h.send(discover(macN(1), pxeMods("PXEClient", 0, "iPXE")...))
	if want := "http://192.0.2.2:8080/boot/" + macN(1).String() + ".ipxe"; r.BootFileNameOption() != want {
		t.Errorf("ipxe url %q want %q", r.BootFileNameOption(), want)
	}
	r, _ = h.send(discover(macN(1), pxeMods("PXEClient", 9, "")...))
	if r.BootFileNameOption() != "bootx64.efi" {
		t.Errorf("unset field did not default: %q", r.BootFileNameOption())
	}
}

func TestProxyMode(t *testing.T) {
	cfg := testConfig()
	cfg.Proxy = true
	h := newHarness(t, cfg)
	guid := dhcpv4.WithGeneric(dhcpv4.GenericOptionCode(optClientGUID), append([]byte{0}, make([]byte, 16)...))

	// A plain client is never answered.
	if r, _ := h.send(discover(macN(1))); r != nil || h.lastEvent().Reason != DropNotPXE {
		t.Fatalf("proxy answered a plain client: %v", r)
	}
	// A BIOS PXE client gets boot info, no address.
	r, dst := h.send(discover(macN(2), pxeMods("PXEClient:Arch:00000:UNDI:002001", 0, "", guid)...))
	if r == nil || r.MessageType() != dhcpv4.MessageTypeOffer {
		t.Fatalf("no proxy offer: %+v", h.lastEvent())
	}
	if addr(r.YourIPAddr).IsValid() || r.Options.Has(dhcpv4.OptionIPAddressLeaseTime) || r.Options.Has(dhcpv4.OptionSubnetMask) {
		t.Errorf("proxy offer carries an address: yiaddr %s", r.YourIPAddr)
	}
	if r.ClassIdentifier() != "PXEClient" || r.BootFileNameOption() != "lpxelinux.0" || !dst.IP.Equal(net.IPv4bcast) {
		t.Errorf("vendor %q file %q dst %s", r.ClassIdentifier(), r.BootFileNameOption(), dst)
	}
	if v := r.Options.Get(dhcpv4.OptionVendorSpecificInformation); len(v) != 4 || v[0] != 6 || v[2] != 8 {
		t.Errorf("option 43 %v", v)
	}
	if !r.Options.Has(dhcpv4.GenericOptionCode(optClientGUID)) || addr(r.ServerIdentifier()) != srvIP {
		t.Error("GUID or server id missing")
	}
	// UEFI HTTP client.
	r, _ = h.send(discover(macN(3), pxeMods("HTTPClient:Arch:00016:UNDI:003001", 16, "")...))
	if r == nil || r.ClassIdentifier() != "HTTPClient" || r.BootFileNameOption() != "http://192.0.2.1:5248/bootx64.efi" {
		t.Errorf("http client: %v", r)
	}
	// The PXE client's REQUEST to the real DHCP server is not ours...
	other := msg(dhcpv4.MessageTypeRequest, macN(2), pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, "",
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(192, 0, 2, 254))))...)
	if r, _ := h.send(other); r != nil {
		t.Errorf("proxy answered a REQUEST for another server")
	}
	// ...but its boot-server REQUEST on port 4011 is, answered unicast.
	ci := net.IPv4(192, 0, 2, 77)
	peer := &net.UDPAddr{IP: ci, Port: 68}
	bsr := msg(dhcpv4.MessageTypeRequest, macN(2), pxeMods("PXEClient:Arch:00007:UNDI:003016", 7, "", dhcpv4.WithClientIP(ci))...)
	r, dst = h.sendOn(bsr, PXEPort, peer)
	if r == nil || r.MessageType() != dhcpv4.MessageTypeAck || r.BootFileNameOption() != "bootx64.efi" || dst != peer {
		t.Errorf("4011 request: %v to %v", r, dst)
	}
	if addr(r.YourIPAddr).IsValid() {
		t.Error("proxy ack carries an address")
	}
	// No leases were created.
	if ls, _ := h.store.List(t.Context()); len(ls) != 0 {
		t.Errorf("proxy mode stored leases: %v", ls)
	}
}
