package httpserve

import (
	"net"
	"sync"
)

// capListener closes a new connection at once when its source address
// already holds max: a flood of idle sockets from one address cannot use
// up the process's descriptors, and other clients keep being served.
type capListener struct {
	net.Listener
	max int

	mu      sync.Mutex
	open    map[string]int
	refused uint64
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := sourceOf(c)
		l.mu.Lock()
		if l.open[host] >= l.max {
			l.refused++
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.open[host]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *capListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

// sourceOf is the address a connection comes from, without its port.
func sourceOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if v4 := a.IP.To4(); v4 != nil {
			return v4.String()
		}
		return a.IP.String()
	}
	return c.RemoteAddr().String()
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
