package ipmibmc

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
)

// faultConn is the BMC's UDP socket with faults injected per packet.
// go-ipmi's server reads packets in one loop and answers each from a
// goroutine of its own, so losses are applied on reading (a lost request
// is never seen) and delays on writing (one slow answer does not hold up
// the others), without changing the library.
type faultConn struct {
	pc     *net.UDPConn
	closed chan struct{}
	once   sync.Once

	mu     sync.Mutex
	faults lab.Faults

	// opened, if set, learns each RMCP+ session the BMC allocates, from
	// its successful answer to Open Session.
	opened func(id uint32)
}

func newFaultConn(pc *net.UDPConn, f lab.Faults) *faultConn {
	return &faultConn{pc: pc, closed: make(chan struct{}), faults: f}
}

func (c *faultConn) get() lab.Faults {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.faults
}

func (c *faultConn) set(f lab.Faults) {
	c.mu.Lock()
	c.faults = f
	c.mu.Unlock()
}

// ReadFrom returns the next request that is not lost. A hung BMC reads
// and drops everything, like a BMC whose network stack is alive but whose
// IPMI service is stuck.
func (c *faultConn) ReadFrom(buf []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.pc.ReadFromUDP(buf)
		if err != nil {
			return n, addr, err
		}
		f := c.get()
		if f.Hang || (f.LossRate > 0 && rand.Float64() < f.LossRate) {
			continue
		}
		return n, addr, nil
	}
}

// WriteTo sends an answer after the configured delay.
func (c *faultConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if c.opened != nil {
		if id, ok := openSessionID(p); ok {
			c.opened(id)
		}
	}
	if d := c.get().Delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-c.closed:
			t.Stop()
			return 0, net.ErrClosed
		}
	}
	if c.get().Hang {
		return len(p), nil // hung while the request was being served
	}
	return c.pc.WriteTo(p, addr)
}

func (c *faultConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.pc.Close()
}

// LocalAddr lets go-ipmi learn the port it serves (for SOL's Activate
// Payload answer).
func (c *faultConn) LocalAddr() net.Addr { return c.pc.LocalAddr() }

// openSessionID returns the BMC's session id from an RMCP+ Open Session
// Response that allocated a session (status 0): RMCP header (4 bytes),
// session header (auth type 06h, payload type 11h, session id, sequence,
// payload length), then tag, status, privilege, reserved, the console's
// session id and the BMC's.
func openSessionID(p []byte) (uint32, bool) {
	if len(p) < 16+12 || p[0] != 0x06 || p[3] != 0x07 || p[4] != 0x06 || p[5]&0x3f != 0x11 {
		return 0, false
	}
	pl := p[16:]
	if pl[1] != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(pl[8:12]), true
}
