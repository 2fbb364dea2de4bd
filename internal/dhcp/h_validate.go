package dhcp

import (
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// maxPacket bounds accepted datagrams. Real clients stay within one
// Ethernet frame; anything bigger is hostile or broken and would only cost
// parsing time.
const maxPacket = 1500

// validate drops what no well-behaved client or relay sends, before any
// handler spends a lease-store lookup on it.
func validate(req, _ *dhcpv4.DHCPv4, r *Request) bool {
	switch {
	case r.Size > maxPacket:
		return r.drop(DropOversized)
	case req.OpCode != dhcpv4.OpcodeBootRequest:
		return r.drop(DropWrongOp)
	case r.HLen == 0 || r.HLen > dhcpv4.MaxHWAddrLen,
		req.HWType == iana.HWTypeEthernet && r.HLen != 6:
		return r.drop(DropBadHLen)
	}
	switch req.MessageType() {
	case dhcpv4.MessageTypeNone:
		return r.drop(DropNoMsgType)
	case dhcpv4.MessageTypeDiscover, dhcpv4.MessageTypeRequest, dhcpv4.MessageTypeRelease,
		dhcpv4.MessageTypeDecline, dhcpv4.MessageTypeInform:
	default:
		return r.drop(DropBadMsgType)
	}
	r.Boot = classify(req)
	r.Event.Arch = r.Boot.Arch
	return false
}
