// Package connlimit caps what clients hold at once (connections,
// transfers, queries in flight), in all and per source, so that one
// client opening idle sockets cannot use up a server's slots or the
// process's descriptors while others wait.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
)

// Limits bound the connections open at once. Zero fields do not limit.
type Limits struct {
	// Total is the connections from everyone.
	Total int
	// PerAddress is the connections from one source address.
	PerAddress int
	// Reserved addresses may open Spare connections beyond Total, so a
	// flood from other addresses cannot lock them out (they still count
	// against PerAddress).
	Reserved func(netip.Addr) bool
	Spare    int
}

// OrDefault is a limit as flags and configurations give it: zero takes
// d, and a negative value turns the limit off (zero).
func OrDefault[T ~int | ~int64](v, d T) T {
	switch {
	case v == 0:
		return d
	case v < 0:
		return 0
	}
	return v
}

// Listen wraps ln with l: a connection over a limit is closed at once,
// and Accept waits for the next.
func (l Limits) Listen(ln net.Listener) net.Listener {
	if l.Total <= 0 && l.PerAddress <= 0 {
		return ln
	}
	return &Listener{Listener: ln, slots: l.Slots()}
}

// Slots are l's counts, for things other than a listener's connections.
func (l Limits) Slots() *Slots[netip.Addr] {
	return &Slots[netip.Addr]{Total: l.Total, PerKey: l.PerAddress, Reserved: l.Reserved, Spare: l.Spare}
}

// Listener is a listener under Limits.
type Listener struct {
	net.Listener
	slots *Slots[netip.Addr]
}

// Accept returns the next connection within the limits.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, ok := l.slots.Take(Source(c.RemoteAddr()))
		if !ok {
			_ = c.Close()
			continue
		}
		return &countedConn{Conn: c, release: release}, nil
	}
}

// Source is the address a connection comes from, without its port
// (IPv4-mapped IPv6 as IPv4).
func Source(a net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// countedConn gives its slot back once, however often it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// Slots count what is held at once, in all and per key (a source
// address, a client's network). Zero limits do not limit.
type Slots[K comparable] struct {
	Total, PerKey int
	// Reserved keys may take Spare slots beyond Total.
	Reserved func(K) bool
	Spare    int

	mu    sync.Mutex
	open  map[K]int
	total int // counted against Total
	spare int // counted against Spare
}

// Take counts one for k, reporting whether it is within the limits;
// release gives it back (once).
func (s *Slots[K]) Take(k K) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.PerKey > 0 && s.open[k] >= s.PerKey {
		return nil, false
	}
	spare := false
	if s.Total > 0 && s.total >= s.Total {
		if s.Reserved == nil || !s.Reserved(k) || s.spare >= s.Spare {
			return nil, false
		}
		spare = true
	}
	if s.open == nil {
		s.open = map[K]int{}
	}
	s.open[k]++
	if spare {
		s.spare++
	} else {
		s.total++
	}
	return func() { s.release(k, spare) }, true
}

func (s *Slots[K]) release(k K, spare bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if spare {
		s.spare--
	} else {
		s.total--
	}
	if s.open[k]--; s.open[k] <= 0 {
		delete(s.open, k)
	}
}
