package dhcp

import (
	"net/netip"
	"slices"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Relay agent sub-option 5 (RFC 3527) and option 118 (RFC 3011) name the
// client's link when giaddr cannot (a relay whose giaddr is on another
// network than the clients it serves).
const (
	raiLinkSelection = 5
	optSubnetSelect  = 118
)

// selectSubnet picks the subnet a request belongs to: the relay's (giaddr)
// for relayed requests, else the receiving interface's. Option 82 is
// echoed back, as RFC 3046 requires for the relay to route the reply.
func selectSubnet(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	st := r.cfg
	var sn *Subnet
	if gi := addr(req.GatewayIPAddr); gi.IsValid() {
		r.Event.Relay = gi
		sn = st.subnetFor(linkAddress(req, gi))
	} else {
		for _, a := range localCandidates(st.cfg.ServerIP, r.Iface) {
			if sn = st.subnetFor(a); sn != nil {
				break
			}
		}
	}
	if sn == nil {
		return r.drop(DropNoSubnet)
	}
	r.Subnet, r.Event.Subnet = sn, sn.CIDR
	if !sn.Enabled {
		return r.drop(DropDisabled)
	}
	r.ServerIP = serverID(st.cfg.ServerIP, r.Iface, sn)
	if !r.ServerIP.IsValid() {
		return r.drop(DropNoServerAddr)
	}
	if v := req.Options.Get(dhcpv4.OptionRelayAgentInformation); v != nil {
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionRelayAgentInformation, v))
	}
	return false
}

// linkAddress honours the relay's link-selection hints. They are read only
// on relayed requests: a relay is infrastructure we trust to say where a
// client is, a client claiming a subnet for itself is not.
func linkAddress(req *dhcpv4.DHCPv4, gi netip.Addr) netip.Addr {
	if rai := req.RelayAgentInfo(); rai != nil {
		if a, ok := netip.AddrFromSlice(rai.Get(dhcpv4.GenericOptionCode(raiLinkSelection))); ok && a.Is4() {
			return a
		}
	}
	if a, ok := netip.AddrFromSlice(req.Options.Get(dhcpv4.GenericOptionCode(optSubnetSelect))); ok && a.Is4() {
		return a
	}
	return gi
}

// localCandidates lists the addresses that identify "this interface's
// subnet", the configured server address first when it is one of them (an
// interface with secondary addresses serves its primary subnet), or alone
// when the interface is unknown (Serve on an unbound socket).
func localCandidates(server netip.Addr, iface []netip.Addr) []netip.Addr {
	if server.IsValid() && (len(iface) == 0 || slices.Contains(iface, server)) {
		return append([]netip.Addr{server}, iface...)
	}
	return iface
}

// serverID chooses option 54: the configured address, else our address on
// the client's subnet, else any address of the interface.
func serverID(cfg netip.Addr, iface []netip.Addr, sn *Subnet) netip.Addr {
	if cfg.IsValid() {
		return cfg
	}
	for _, a := range iface {
		if sn != nil && sn.CIDR.Contains(a) {
			return a
		}
	}
	if len(iface) > 0 {
		return iface[0]
	}
	return netip.Addr{}
}
