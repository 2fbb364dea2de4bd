package dhcp

import (
	"net"
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/rfc1035label"
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
	if dns := dnsServers(sn, r.ServerIP); len(dns) > 0 {
		resp.UpdateOption(dhcpv4.OptDNS(ips(dns)...))
	}
	if sn.DomainName != "" {
		resp.UpdateOption(dhcpv4.OptDomainName(sn.DomainName))
	}
	if len(sn.Search) > 0 {
		resp.UpdateOption(dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: sn.Search}))
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

// dnsServers are the subnet's DNS servers, after the server's own
// address when the rack answers DNS there (MAAS lists its own first).
func dnsServers(sn *Subnet, self netip.Addr) []netip.Addr {
	if !sn.RackDNS || !self.Is4() || (!sn.Gateway.IsValid() && !sn.CIDR.Contains(self)) {
		return sn.DNS
	}
	out := []netip.Addr{self}
	for _, a := range sn.DNS {
		if a != self {
			out = append(out, a)
		}
	}
	return out
}

func ips(as []netip.Addr) []net.IP {
	out := make([]net.IP, len(as))
	for i, a := range as {
		out[i] = a.AsSlice()
	}
	return out
}
