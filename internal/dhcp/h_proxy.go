package dhcp

import (
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// PXEPort is where PXE clients send their boot-server REQUEST after a
// proxyDHCP offer (PXE 2.1 spec, "BINL" port).
const PXEPort = 4011

// Options a proxyDHCP reply carries for PXE firmware.
const (
	optClientGUID   = 97 // client machine identifier, echoed back
	pxeDiscoveryCtl = 6  // PXE vendor sub-option: boot-server discovery control
	pxeUseBootFile  = 8  // bit 3: skip discovery, boot the file in the offer
)

// proxyOnly replaces subnet selection and leasing in proxyDHCP mode:
// another server owns the addresses, so answer only network-booting
// clients, never with an address, and never anyone else (a second server
// answering plain clients would break the site's DHCP).
func proxyOnly(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	if !r.Boot.PXE {
		return r.drop(DropNotPXE)
	}
	r.ServerIP = serverID(r.cfg.cfg.ServerIP, r.Iface, nil)
	if !r.ServerIP.IsValid() {
		return r.drop(DropNoServerAddr)
	}
	sid := addr(req.ServerIdentifier())
	switch mt := req.MessageType(); {
	case mt == dhcpv4.MessageTypeDiscover && r.LocalPort != PXEPort:
		resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeOffer))
		r.Event.Kind = EventOffer
	case (mt == dhcpv4.MessageTypeRequest || mt == dhcpv4.MessageTypeInform) &&
		(r.LocalPort == PXEPort || sid == r.ServerIP):
		resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeAck))
		r.Event.Kind = EventAck
	case mt == dhcpv4.MessageTypeRequest:
		// The client's REQUEST to the real DHCP server.
		return r.drop(DropOtherServer)
	default:
		return r.drop(DropNotForUs)
	}
	resp.YourIPAddr = nil
	if r.Boot.HTTP {
		resp.UpdateOption(dhcpv4.OptClassIdentifier("HTTPClient"))
	} else {
		// "PXEClient" marks this as a proxy offer, and discovery control
		// tells the ROM to boot the file named here rather than multicast
		// for boot servers.
		resp.UpdateOption(dhcpv4.OptClassIdentifier("PXEClient"))
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation,
			[]byte{pxeDiscoveryCtl, 1, pxeUseBootFile, 255}))
	}
	if v := req.Options.Get(dhcpv4.GenericOptionCode(optClientGUID)); v != nil {
		// Some PXE ROMs discard replies lacking their own GUID.
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(optClientGUID), v))
	}
	return false
}
