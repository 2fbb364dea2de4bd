package dhcp

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// memConn is a net.PacketConn in memory: Serve's loop can be tested with
// broadcast replies without any socket, so nothing can leave the machine.
type memConn struct {
	in     chan []byte
	out    chan sent
	once   sync.Once
	closed chan struct{}
}

type sent struct {
	data []byte
	to   net.Addr
}

func newMemConn() *memConn {
	return &memConn{in: make(chan []byte, 8), out: make(chan sent, 8), closed: make(chan struct{})}
}

func (c *memConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case p := <-c.in:
		return copy(b, p), &net.UDPAddr{IP: net.IPv4zero, Port: 68}, nil
	case <-c.closed:
		return 0, nil, net.ErrClosed
	}
}

func (c *memConn) WriteTo(b []byte, to net.Addr) (int, error) {
	c.out <- sent{bytes.Clone(b), to}
	return len(b), nil
}

func (c *memConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.UDPAddr{IP: srvIP.AsSlice(), Port: 67} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

func TestServeLoop(t *testing.T) {
	cfg := testConfig()
	cfg.ServerIP = netip.Addr{} // so the conn's local address must be used
	s, err := NewServer(cfg, NewMemStore(), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	c := newMemConn()
	done := make(chan error, 1)
	go func() { done <- s.Serve(c) }()

	// An oversized datagram must be seen whole (not truncated into a
	// parseable one) and dropped.
	big := append(discover(macN(1)).ToBytes(), make([]byte, 2*maxPacket)...)
	c.in <- big
	c.in <- discover(macN(1)).ToBytes()
	select {
	case r := <-c.out:
		offer, err := dhcpv4.FromBytes(r.data)
		if err != nil || offer.MessageType() != dhcpv4.MessageTypeOffer {
			t.Fatalf("reply %v %v", offer, err)
		}
		if ua := r.to.(*net.UDPAddr); !ua.IP.Equal(net.IPv4bcast) || ua.Port != 68 {
			t.Errorf("offer sent to %s", r.to)
		}
		// The interface subnet came from the conn's local address.
		if addr(offer.ServerIdentifier()) != srvIP {
			t.Errorf("server id %s", offer.ServerIdentifier())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
	// Workers run concurrently: the drop may be counted after the reply.
	for i := 0; s.Stats().Drops[DropOversized] != 1; i++ {
		if i == 100 {
			t.Fatalf("oversized drops %v", s.Stats().Drops)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	if err := s.Serve(newMemConn()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve on a closed server: %v", err)
	}
	if err := s.ListenAndServe("anvil-no-such-if0"); err == nil {
		t.Error("ListenAndServe on a missing interface succeeded")
	}
}
