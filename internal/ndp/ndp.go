// Package ndp answers IPv6 router solicitations on a provisioning network
// with an advertisement that offers nothing: router lifetime 0, no
// prefixes, no DHCPv6 flags.
//
// Why: network-boot firmware (iPXE) configures IPv6 alongside DHCPv4 and,
// on an IPv4-only provisioning network where no router advertises, waits
// about 16 seconds for an advertisement before it goes on, on every boot.
// An advertisement without a lifetime or prefixes ends that wait at once
// and gives nobody a route or an address. It is sent to the soliciting
// host only (or, for a host without an address yet, to all nodes).
package ndp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv6"
)

// Responder answers router solicitations on one interface.
type Responder struct {
	iface *net.Interface
	conn  *ipv6.PacketConn
	raw   net.PacketConn
	log   *slog.Logger

	mu      sync.Mutex
	last    map[string]time.Time // per solicitor, to answer floods once a second
	Answers int64
}

var allRouters = &net.IPAddr{IP: net.ParseIP("ff02::2")}

// Listen opens the ICMPv6 socket on the named interface.
func Listen(ifname string, log *slog.Logger) (*Responder, error) {
	if log == nil {
		log = slog.Default()
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("ndp: %w", err)
	}
	c, err := icmp.ListenPacket("ip6:ipv6-icmp", "::")
	if err != nil {
		return nil, fmt.Errorf("ndp: %w", err)
	}
	p := c.IPv6PacketConn()
	fail := func(err error) (*Responder, error) {
		c.Close()
		return nil, fmt.Errorf("ndp on %s: %w", ifname, err)
	}
	if err := p.JoinGroup(ifi, allRouters); err != nil {
		return fail(err)
	}
	if err := p.SetControlMessage(ipv6.FlagInterface|ipv6.FlagHopLimit, true); err != nil {
		return fail(err)
	}
	var f ipv6.ICMPFilter
	f.SetAll(true)
	f.Accept(ipv6.ICMPTypeRouterSolicitation)
	if err := p.SetICMPFilter(&f); err != nil {
		return fail(err)
	}
	// Neighbour discovery messages must carry hop limit 255.
	if err := p.SetMulticastHopLimit(255); err != nil {
		return fail(err)
	}
	if err := p.SetHopLimit(255); err != nil {
		return fail(err)
	}
	return &Responder{iface: ifi, conn: p, raw: c, log: log, last: map[string]time.Time{}}, nil
}

// Serve answers until Close.
func (r *Responder) Serve() error {
	buf := make([]byte, 1500)
	for {
		n, cm, src, err := r.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("ndp: %w", err)
		}
		if cm == nil || cm.IfIndex != r.iface.Index || cm.HopLimit != 255 {
			continue // not ours, or forwarded from off-link (RFC 4861 6.1.1)
		}
		m, err := icmp.ParseMessage(58, buf[:n])
		if err != nil || m.Type != ipv6.ICMPTypeRouterSolicitation || m.Code != 0 {
			continue
		}
		ip, _ := src.(*net.IPAddr)
		if ip == nil || !r.due(ip.IP.String()) {
			continue
		}
		dst := &net.IPAddr{IP: ip.IP, Zone: r.iface.Name}
		if ip.IP.IsUnspecified() {
			dst = &net.IPAddr{IP: net.IPv6linklocalallnodes, Zone: r.iface.Name}
		}
		if _, err := r.conn.WriteTo(r.advertisement(), &ipv6.ControlMessage{IfIndex: r.iface.Index, HopLimit: 255}, dst); err != nil {
			r.log.Debug("ndp: answer", "to", dst, "err", err)
			continue
		}
		r.mu.Lock()
		r.Answers++
		r.mu.Unlock()
	}
}

// due reports whether src may be answered now: once a second per host.
func (r *Responder) due(src string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if t, ok := r.last[src]; ok && now.Sub(t) < time.Second {
		return false
	}
	if len(r.last) > 10000 {
		clear(r.last)
	}
	r.last[src] = now
	return true
}

// advertisement is a router advertisement that offers nothing, with our
// link-layer address.
func (r *Responder) advertisement() []byte {
	body := make([]byte, 12, 20)
	// Current hop limit 0 (unspecified), flags 0 (no DHCPv6), router
	// lifetime 0 (not a default router), reachable and retrans 0.
	if len(r.iface.HardwareAddr) == 6 {
		body = append(body, 1, 1) // source link-layer address option
		body = append(body, r.iface.HardwareAddr...)
	}
	b, _ := (&icmp.Message{Type: ipv6.ICMPTypeRouterAdvertisement, Body: &icmp.RawBody{Data: body}}).Marshal(nil)
	return b // the kernel fills in the ICMPv6 checksum
}

// Close stops Serve.
func (r *Responder) Close() error { return r.raw.Close() }
