package dns

import (
	"net"
	"net/netip"
	"sync/atomic"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/connlimit"
	"github.com/anvilmetal/anvil/internal/ratelimit"
)

// Limits bound what one client, or a flood of forged ones, may draw from
// the server. Zero fields take Defaults; a negative one turns that limit
// off.
type Limits struct {
	// RRLRate is the UDP answers per second one client prefix (an IPv4
	// /24, an IPv6 /56) gets, with a second's worth at once; beyond it
	// every RRLSlip-th answer is an empty truncated one (a real client
	// retries over TCP) and the rest are dropped, so a forged source
	// draws little onto its victim.
	RRLRate int
	RRLSlip int
	// TCPConns and TCPConnsPerAddress cap the TCP connections open at
	// once, in all and from one address.
	TCPConns           int
	TCPConnsPerAddress int
	// Forwards and ForwardsPerPrefix cap the queries forwarded upstream
	// at once, in all and for one client prefix; beyond them a query is
	// answered SERVFAIL at once rather than wait on a socket.
	Forwards          int
	ForwardsPerPrefix int
}

// Defaults are generous for a rack's machines (a /24 of them booting
// at once) and small against a flood.
var Defaults = Limits{RRLRate: 200, RRLSlip: 2, TCPConns: 256, TCPConnsPerAddress: 16, Forwards: 256, ForwardsPerPrefix: 64}

// rrlKeys bounds the response-rate table: beyond it, a new prefix is
// limited until old ones refill.
const rrlKeys = 100000

// WithDefaults fills zero fields from Defaults and turns negative ones
// to zero (no limit).
func (l Limits) WithDefaults() Limits {
	pick := connlimit.OrDefault[int]
	d := Defaults
	return Limits{RRLRate: pick(l.RRLRate, d.RRLRate), RRLSlip: pick(l.RRLSlip, d.RRLSlip),
		TCPConns: pick(l.TCPConns, d.TCPConns), TCPConnsPerAddress: pick(l.TCPConnsPerAddress, d.TCPConnsPerAddress),
		Forwards: pick(l.Forwards, d.Forwards), ForwardsPerPrefix: pick(l.ForwardsPerPrefix, d.ForwardsPerPrefix)}
}

// guards are a running server's limits.
type guards struct {
	rrl     *ratelimit.PerKey // nil: no response-rate limiting
	slip    int
	limited atomic.Uint64 // answers over the rate, for the slip

	// fwd counts the forwards in flight, per client prefix.
	fwd *connlimit.Slots[netip.Prefix]
}

func newGuards(l Limits) *guards {
	g := &guards{slip: l.RRLSlip, fwd: &connlimit.Slots[netip.Prefix]{Total: l.Forwards, PerKey: l.ForwardsPerPrefix}}
	if l.RRLRate > 0 {
		g.rrl = ratelimit.NewBounded(float64(l.RRLRate), l.RRLRate, rrlKeys)
	}
	return g
}

func (l Limits) tcpListener(ln net.Listener) net.Listener {
	return connlimit.Limits{Total: l.TCPConns, PerAddress: l.TCPConnsPerAddress}.Listen(ln)
}

// clientPrefix is the network a client is counted in: forged sources
// vary the host part for free.
func clientPrefix(a netip.Addr) netip.Prefix {
	bits := 56
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p
}

// rateLimited reports whether a UDP answer to client is over the rate,
// and if so the answer to send instead (nil: drop it).
func (g *guards) rateLimited(client netip.Addr, r *dns.Msg) (bool, *dns.Msg) {
	if g.rrl == nil || g.rrl.Allow(clientPrefix(client).String()) {
		return false, nil
	}
	if g.slip <= 0 || g.limited.Add(1)%uint64(g.slip) != 0 || r == nil || len(r.Question) != 1 {
		return true, nil
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Truncated = true
	return true, m
}
