package dhcp

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var (
	errPoolFull    = errors.New("dhcp: no free address")
	errStaticInUse = errors.New("dhcp: reserved address leased to another client")
)

// allocator holds what the lease store does not: addresses recently
// DECLINEd (in use by some device we do not know), and a per-subnet scan
// cursor. The cursor makes new clients take fresh addresses rather than
// the one just released, so a returning client usually finds its old
// address still free, and ARP caches on the wire are not confused.
type allocator struct {
	mu       sync.Mutex
	declined map[netip.Addr]time.Time // until
	cursor   map[netip.Prefix]netip.Addr
}

func (a *allocator) decline(ip netip.Addr, until time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.declined == nil {
		a.declined = map[netip.Addr]time.Time{}
	}
	a.declined[ip] = until
}

func (a *allocator) isDeclined(ip netip.Addr, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	until, ok := a.declined[ip]
	if ok && !now.Before(until) {
		delete(a.declined, ip)
		return false
	}
	return ok
}

func (a *allocator) next(p netip.Prefix) netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cursor[p]
}

func (a *allocator) advance(p netip.Prefix, ip netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cursor == nil {
		a.cursor = map[netip.Prefix]netip.Addr{}
	}
	a.cursor[p] = ip
}

// allowed reports whether mac may hold ip on subnet sn: its own static
// address, or a pool address that is not reserved, special, declined,
// pinned to another static host or held by the partner for another
// client. An address of the partner's share is allowed only to the
// client the partner leased it to.
func (s *Server) allowed(r *Request, mac net.HardwareAddr, ip netip.Addr) bool {
	sn := r.Subnet
	if !sn.CIDR.Contains(ip) {
		return false
	}
	if h := r.cfg.hostIPs[ip]; h != nil {
		return bytes.Equal(h.MAC, mac)
	}
	pool := sn.Dynamic
	if inRanges(sn.Peer, ip) {
		if !s.peerConfirms(mac, ip, r.Now) {
			return false
		}
		pool = sn.Peer
	}
	switch {
	case s.peerTakes(mac, ip, r.Now), !inRanges(pool, ip), inRanges(sn.Reserved, ip),
		ip == sn.CIDR.Addr(), ip == sn.broadcast(), ip == sn.Gateway, ip == r.ServerIP:
		return false
	}
	return !s.alloc.isDeclined(ip, r.Now)
}

// offer picks and holds an address for a DISCOVER, in order of how
// strongly the client is tied to it: its static reservation, the address
// it holds from this server or else from the partner, the one it had
// before, the one it asks for, then the first free one.
func (s *Server) offer(req *dhcpv4.DHCPv4, r *Request) (netip.Addr, error) {
	mac, sn := req.ClientHWAddr, r.Subnet
	cur, have, err := s.store.Get(r.Ctx, mac)
	if err != nil {
		return netip.Addr{}, err
	}
	hold := func(ip netip.Addr) (bool, error) {
		if have && cur.IP == ip && cur.State == StateBound && cur.Active(r.Now) {
			return true, nil // already theirs; an offer must not shorten it
		}
		err := s.store.Put(r.Ctx, Lease{MAC: mac, IP: ip, Subnet: sn.CIDR, Hostname: hostname(req, r.Host),
			State: StateOffered, Expires: r.Now.Add(r.cfg.cfg.OfferHold), Updated: r.Now})
		if errors.Is(err, ErrAddressInUse) {
			return false, nil
		}
		return err == nil, err
	}
	if h := r.Host; h != nil && sn.CIDR.Contains(h.IP) {
		ok, err := hold(h.IP)
		if err == nil && !ok {
			// Another client still holds the reserved address (the
			// reservation is newer than its lease). A pool address would be
			// NAKed at REQUEST, the host being pinned, so say why instead.
			err = errStaticInUse
		}
		return h.IP, err
	}
	var wants []netip.Addr
	if have && cur.Active(r.Now) {
		wants = append(wants, cur.IP)
	}
	if l, ok := s.peerOf(mac, r.Now); ok {
		wants = append(wants, l.IP)
	}
	if have && !cur.Active(r.Now) {
		wants = append(wants, cur.IP)
	}
	if ip := addr(req.RequestedIPAddress()); ip.IsValid() {
		wants = append(wants, ip)
	}
	for _, ip := range wants {
		if s.allowed(r, mac, ip) {
			if ok, err := hold(ip); ok || err != nil {
				return ip, err
			}
		}
	}
	return s.scan(r, mac, hold)
}

// scan walks the pools from the cursor, first for addresses nobody ever
// held, then for ones whose lease has lapsed (their old owners would
// like them back, so they go last).
func (s *Server) scan(r *Request, mac net.HardwareAddr, hold func(netip.Addr) (bool, error)) (netip.Addr, error) {
	sn := r.Subnet
	start := s.alloc.next(sn.CIDR)
	for _, reuse := range []bool{false, true} {
		for _, after := range []bool{true, false} {
			for _, rg := range sn.Dynamic {
				for ip := rg.Start; ip.IsValid() && ip.Compare(rg.End) <= 0; ip = ip.Next() {
					if start.IsValid() && (ip.Compare(start) > 0) != after {
						continue
					}
					if !s.allowed(r, mac, ip) {
						continue
					}
					l, taken, err := s.store.FindByIP(r.Ctx, ip)
					if err != nil {
						return netip.Addr{}, err
					}
					if taken && (!reuse || l.Active(r.Now)) && !bytes.Equal(l.MAC, mac) {
						continue
					}
					ok, err := hold(ip)
					if err != nil {
						return netip.Addr{}, err
					}
					if ok {
						s.alloc.advance(sn.CIDR, ip)
						return ip, nil
					}
				}
			}
			if !start.IsValid() {
				break // no cursor: one pass covers everything
			}
		}
	}
	return netip.Addr{}, errPoolFull
}

// hostname is what the lease records: the reservation's name, else the
// one the client sent.
func hostname(req *dhcpv4.DHCPv4, h *StaticHost) string {
	if h != nil && h.Hostname != "" {
		return h.Hostname
	}
	return req.HostName()
}
