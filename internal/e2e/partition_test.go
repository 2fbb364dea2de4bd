package e2e

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/testutil/netns"
)

// partition is a TCP relay inside the namespace that the test can cut,
// as a network partition between a rack and its region would.
type partition struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
	ns    *netns.NS
	to    string
	// host dials to from the host's namespace, not from ns: a service of
	// the host (PostgreSQL) made reachable inside ns.
	host bool
}

func (p *partition) start(t *testing.T, ns *netns.NS, listen, to string) {
	p.ns, p.to = ns, to
	var ln net.Listener
	if err := ns.Do(func() (err error) { ln, err = net.Listen("tcp4", listen); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
}

func (p *partition) relay(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	var up net.Conn
	dial := func() (err error) { up, err = net.Dial("tcp4", p.to); return err }
	var err error
	if p.host {
		err = dial()
	} else {
		err = p.ns.Do(dial)
	}
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

// Cut drops every relayed connection and refuses new ones.
func (p *partition) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Heal lets connections through again.
func (p *partition) Heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}
