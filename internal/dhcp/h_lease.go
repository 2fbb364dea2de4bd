package dhcp

import (
	"errors"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// leases is the link that owns addresses: it answers DISCOVER with an
// OFFER, REQUEST with ACK or NAK, records RELEASE and DECLINE (which get no
// reply), and ACKs INFORM without an address.
func (s *Server) leases(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		ip, err := s.offer(req, r)
		if err != nil {
			return s.storeFailed(r, err)
		}
		resp.YourIPAddr = ip.AsSlice()
		resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeOffer))
		r.Event.Kind, r.Event.IP = EventOffer, ip
	case dhcpv4.MessageTypeRequest:
		return s.request(req, resp, r)
	case dhcpv4.MessageTypeRelease:
		return s.release(req, r)
	case dhcpv4.MessageTypeDecline:
		return s.decline(req, r)
	case dhcpv4.MessageTypeInform:
		resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeAck))
		r.Event.Kind, r.Event.IP = EventAck, addr(req.ClientIPAddr)
	}
	return false
}

func (s *Server) storeFailed(r *Request, err error) bool {
	switch {
	case errors.Is(err, errPoolFull):
		return r.drop(DropPoolFull)
	case errors.Is(err, errStaticInUse):
		return r.drop(DropStaticInUse)
	}
	s.log.Warn("dhcp: lease store", "mac", r.Event.MAC, "err", err)
	return r.drop(DropStoreError)
}

// request confirms a lease in any of the client's states: SELECTING
// (server id set), INIT-REBOOT (requested address, no ciaddr) and
// RENEWING/REBINDING (ciaddr). The server is authoritative for its
// subnets, as MAAS configures dhcpd: an address the client may not have is
// NAKed at once, so it falls back to DISCOVER instead of timing out. The
// partner's share is the exception (see peer.go).
func (s *Server) request(req, resp *dhcpv4.DHCPv4, r *Request) bool {
	mac := req.ClientHWAddr
	if sid := addr(req.ServerIdentifier()); sid.IsValid() && sid != r.ServerIP {
		// The client took another server's offer: free the one we held.
		if cur, ok, _ := s.store.Get(r.Ctx, mac); ok && cur.State == StateOffered {
			s.store.Delete(r.Ctx, mac)
		}
		return r.drop(DropOtherServer)
	}
	ip := addr(req.RequestedIPAddress())
	if !ip.IsValid() {
		ip = addr(req.ClientIPAddr)
	}
	r.Event.IP = ip // on a NAK too, so observers see what was refused
	switch {
	case !ip.IsValid():
		return nak(resp, r, "no address requested")
	case !r.Subnet.CIDR.Contains(ip):
		return nak(resp, r, "wrong network")
	case r.Host != nil && r.Subnet.CIDR.Contains(r.Host.IP) && r.Host.IP != ip:
		return nak(resp, r, "reserved address differs")
	case (r.Host == nil || r.Host.IP != ip) && inRanges(r.Subnet.Peer, ip) && !s.peerConfirms(mac, ip, r.Now):
		// The partner's address, and no lease of it to this client that
		// we know of: the partner answers, if it is alive.
		return r.drop(DropPeerUnknown)
	case !s.allowed(r, mac, ip):
		return nak(resp, r, "address not available")
	}
	err := s.store.Put(r.Ctx, Lease{MAC: mac, IP: ip, Subnet: r.Subnet.CIDR, Hostname: hostname(req, r.Host),
		State: StateBound, Expires: r.Now.Add(r.Subnet.LeaseTime), Updated: r.Now})
	if errors.Is(err, ErrAddressInUse) {
		return nak(resp, r, "address in use")
	}
	if err != nil {
		return s.storeFailed(r, err)
	}
	resp.YourIPAddr = ip.AsSlice()
	resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeAck))
	r.Event.Kind, r.Event.IP = EventAck, ip
	return false
}

// nak completes a DHCPNAK: no address, no boot or lease options.
func nak(resp *dhcpv4.DHCPv4, r *Request, why string) bool {
	resp.YourIPAddr = nil
	resp.UpdateOption(dhcpv4.OptMessageType(dhcpv4.MessageTypeNak))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(r.ServerIP.AsSlice()))
	resp.UpdateOption(dhcpv4.OptMessage(why))
	if resp.GatewayIPAddr != nil && !resp.GatewayIPAddr.IsUnspecified() {
		// RFC 2131 4.3.2: the relay must broadcast a NAK, the client's
		// address being in doubt.
		resp.SetBroadcast()
	}
	r.Event.Kind, r.Event.Reason = EventNak, why
	return true
}

// release keeps the record, expired, so the client gets the same address
// when it comes back.
func (s *Server) release(req *dhcpv4.DHCPv4, r *Request) bool {
	ip := addr(req.ClientIPAddr)
	cur, ok, err := s.store.Get(r.Ctx, req.ClientHWAddr)
	if err != nil {
		return s.storeFailed(r, err)
	}
	if !ok || cur.IP != ip || !cur.Active(r.Now) {
		return r.drop(DropNotForUs)
	}
	cur.State, cur.Expires, cur.Updated = StateReleased, r.Now, r.Now
	if err := s.store.Put(r.Ctx, cur); err != nil {
		return s.storeFailed(r, err)
	}
	r.Event.Kind, r.Event.IP = EventRelease, ip
	return true
}

// decline: the client found the address in use by someone else (ARP).
// Forget the lease and keep the address out of the pool for a while.
func (s *Server) decline(req *dhcpv4.DHCPv4, r *Request) bool {
	ip := addr(req.RequestedIPAddress())
	if sid := addr(req.ServerIdentifier()); sid.IsValid() && sid != r.ServerIP {
		return r.drop(DropOtherServer)
	}
	if !ip.IsValid() || !r.Subnet.CIDR.Contains(ip) {
		return r.drop(DropNotForUs)
	}
	if cur, ok, err := s.store.Get(r.Ctx, req.ClientHWAddr); err == nil && ok && cur.IP == ip {
		if err := s.store.Delete(r.Ctx, req.ClientHWAddr); err != nil {
			return s.storeFailed(r, err)
		}
	}
	s.alloc.decline(ip, r.Now.Add(r.cfg.cfg.DeclineHold))
	r.Event.Kind, r.Event.IP = EventDecline, ip
	return true
}
