// Package connlimit caps the connections a listener holds open, in all
// and per source address, so that one client opening idle sockets cannot
// use up a server's slots or the process's descriptors while others wait.
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
	return &Listener{Listener: ln, lim: l, open: map[netip.Addr]int{}}
}

// Listener is a listener under Limits.
type Listener struct {
	net.Listener
	lim Limits

	mu      sync.Mutex
	open    map[netip.Addr]int
	total   int // counted against Total
	spare   int // counted against Spare
	refused uint64
}

// Accept returns the next connection within the limits.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := Source(c.RemoteAddr())
		release, ok := l.take(src)
		if !ok {
			_ = c.Close()
			continue
		}
		return &countedConn{Conn: c, release: release}, nil
	}
}

// Refused is how many connections were closed for being over a limit.
func (l *Listener) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// take counts a connection from src, reporting whether it is within the
// limits, and returns what gives its slot back.
func (l *Listener) take(src netip.Addr) (func(), bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.PerAddress > 0 && l.open[src] >= l.lim.PerAddress {
		l.refused++
		return nil, false
	}
	spare := false
	if l.lim.Total > 0 && l.total >= l.lim.Total {
		if l.lim.Reserved == nil || !l.lim.Reserved(src) || l.spare >= l.lim.Spare {
			l.refused++
			return nil, false
		}
		spare = true
	}
	l.open[src]++
	if spare {
		l.spare++
	} else {
		l.total++
	}
	return func() { l.release(src, spare) }, true
}

func (l *Listener) release(src netip.Addr, spare bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if spare {
		l.spare--
	} else {
		l.total--
	}
	if l.open[src]--; l.open[src] <= 0 {
		delete(l.open, src)
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
