package dhcp

import (
	"net"
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// commonOptions finishes every OFFER and ACK: the server identifier, and
// (outside proxy mode) the subnet's network options and lease times.
func commonOptions(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	resp.UpdateOption(dhcpv4.OptServerIdentifier(r.ServerIP.AsSlice()))
	sn := r.Subnet
	if sn == nil {
		return false
	}
	resp.UpdateOption(dhcpv4.OptSubnetMask(sn.mask()))
	resp.UpdateOption(dhcpv4.OptBroadcastAddress(sn.broadcast().AsSlice()))
	if sn.Gateway.IsValid() {
		resp.UpdateOption(dhcpv4.OptRouter(sn.Gateway.AsSlice()))
	}
	if len(sn.DNS) > 0 {
		resp.UpdateOption(dhcpv4.OptDNS(ips(sn.DNS)...))
	}
	if sn.DomainName != "" {
		resp.UpdateOption(dhcpv4.OptDomainName(sn.DomainName))
	}
	if r.Host != nil && r.Host.Hostname != "" {
		resp.UpdateOption(dhcpv4.OptHostName(r.Host.Hostname))
	}
	if req.MessageType() != dhcpv4.MessageTypeInform {
		// RFC 2131 defaults: renew at 1/2, rebind at 7/8 of the lease.
		resp.UpdateOption(dhcpv4.OptIPAddressLeaseTime(sn.LeaseTime))
		resp.UpdateOption(dhcpv4.OptRenewTimeValue(sn.LeaseTime / 2))
		resp.UpdateOption(dhcpv4.OptRebindingTimeValue(sn.LeaseTime * 7 / 8))
	}
	return false
}

func ips(as []netip.Addr) []net.IP {
	out := make([]net.IP, len(as))
	for i, a := range as {
		out[i] = a.AsSlice()
	}
	return out
}
