package dhcp

import (
	"bytes"
	"net"
	"net/netip"
	"time"
)

// A server may share a subnet with a partner (two racks on one VLAN):
// each hands out its own part of the dynamic ranges (Subnet.Dynamic), and
// the partner's part is Subnet.Peer. The partner's leases reach this
// server through SetPeerLeases. With them the server
//
//   - confirms an address of the partner's share to the client the
//     partner leased it to, when that client rebinds or reboots after the
//     partner died (and offers it to that client again);
//   - never offers any other address of the partner's share, and stays
//     silent on a REQUEST for one: it is not authoritative there, and
//     RFC 2131 4.3.2 asks a server without the client's record to be
//     silent, so a partner that is alive answers alone;
//   - never hands out, in either share, an address the partner holds for
//     another client.

// peerTable is a snapshot of the partner's leases, replaced whole.
type peerTable struct {
	byMAC map[string]Lease
	byIP  map[netip.Addr]Lease
}

// SetPeerLeases replaces what the server knows of its partners' leases.
// Where two name one MAC or one address, the one that lasts longer wins.
func (s *Server) SetPeerLeases(ls []Lease) {
	t := &peerTable{byMAC: map[string]Lease{}, byIP: map[netip.Addr]Lease{}}
	for _, l := range ls {
		if len(l.MAC) == 0 || !l.IP.Is4() {
			continue
		}
		l.MAC = append(net.HardwareAddr(nil), l.MAC...)
		if o, ok := t.byMAC[l.MAC.String()]; !ok || l.Expires.After(o.Expires) {
			t.byMAC[l.MAC.String()] = l
		}
		if o, ok := t.byIP[l.IP]; !ok || l.Expires.After(o.Expires) {
			t.byIP[l.IP] = l
		}
	}
	s.peers.Store(t)
}

// PeerLeases returns the partners' leases the server holds, by address.
func (s *Server) PeerLeases() []Lease {
	t := s.peers.Load()
	if t == nil {
		return nil
	}
	out := make([]Lease, 0, len(t.byIP))
	for _, l := range t.byIP {
		out = append(out, l)
	}
	sortByIP(out)
	return out
}

// PeerLeaseOf is the partner's active lease of mac at now: the rack's boot
// server counts it as the MAC's holder.
func (s *Server) PeerLeaseOf(mac net.HardwareAddr, now time.Time) (Lease, bool) {
	return s.peerOf(mac, now)
}

// peerOf is the partner's active lease of mac.
func (s *Server) peerOf(mac net.HardwareAddr, now time.Time) (Lease, bool) {
	t := s.peers.Load()
	if t == nil {
		return Lease{}, false
	}
	l, ok := t.byMAC[mac.String()]
	return l, ok && l.Active(now)
}

// peerHolder is the partner's active lease of ip.
func (s *Server) peerHolder(ip netip.Addr, now time.Time) (Lease, bool) {
	t := s.peers.Load()
	if t == nil {
		return Lease{}, false
	}
	l, ok := t.byIP[ip]
	return l, ok && l.Active(now)
}

// peerConfirms says whether the partner leased ip to mac, and the lease
// still runs.
func (s *Server) peerConfirms(mac net.HardwareAddr, ip netip.Addr, now time.Time) bool {
	l, ok := s.peerHolder(ip, now)
	return ok && bytes.Equal(l.MAC, mac)
}

// peerTakes says whether the partner holds ip for a client other than mac.
func (s *Server) peerTakes(mac net.HardwareAddr, ip netip.Addr, now time.Time) bool {
	l, ok := s.peerHolder(ip, now)
	return ok && !bytes.Equal(l.MAC, mac)
}
