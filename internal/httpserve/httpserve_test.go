package httpserve

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"
)

func TestWithDefaults(t *testing.T) {
	for name, tc := range map[string]struct{ in, want Limits }{
		"zero takes the defaults": {Limits{}, Defaults},
		"set values stay":         {Limits{Read: time.Second, PerAddress: 3}, Limits{ReadHeader: Defaults.ReadHeader, Read: time.Second, Write: Defaults.Write, Idle: Defaults.Idle, PerAddress: 3, Total: Defaults.Total, MaxHeaderBytes: Defaults.MaxHeaderBytes}},
		"negative turns off":      {Limits{Write: -1, Idle: -1, PerAddress: -1, Total: -1}, Limits{ReadHeader: Defaults.ReadHeader, Read: Defaults.Read, MaxHeaderBytes: Defaults.MaxHeaderBytes}},
	} {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

// The cap counts open connections per source address: closing one (even
// twice) frees exactly one slot.
func TestCapListenerFreesSlots(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limits{PerAddress: 2}.Listen(raw)
	defer ln.Close()
	accepted := acceptAll(t, ln)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	next := func() net.Conn {
		select {
		case c := <-accepted:
			return c
		case <-time.After(500 * time.Millisecond):
			return nil
		}
	}
	dial()
	dial()
	a, b := next(), next()
	if a == nil || b == nil {
		t.Fatal("two connections under a cap of two were not both accepted")
	}
	over := dial()
	if c := next(); c != nil {
		t.Fatal("a third connection was accepted over the cap")
	}
	_ = over.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := over.Read(make([]byte, 1)); err == nil {
		t.Error("the connection over the cap was not closed")
	}
	a.Close()
	a.Close()
	dial()
	if c := next(); c == nil {
		t.Fatal("a freed slot was not given to the next connection")
	}
	dial()
	if c := next(); c != nil {
		t.Fatal("closing one connection twice freed two slots")
	}
	b.Close()
}

// A stream whose reader stops reading is cut off about one write limit
// after the kernel's buffers fill; one that keeps reading is not, however
// long it lasts. Before, streams lifted the write deadline and a stalled
// reader held its handler for ever.
func TestStreamCutsOffAStalledReader(t *testing.T) {
	ended := make(chan error, 1)
	srv := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := Stream(w, r)
		chunk := make([]byte, 64<<10)
		for {
			if _, err := sw.Write(chunk); err != nil {
				ended <- err
				return
			}
			sw.Flush()
		}
	}), Limits{Write: time.Second}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	// Read steadily for past the limit, then stop.
	buf := make([]byte, 32<<10)
	for t0 := time.Now(); time.Since(t0) < 2500*time.Millisecond; {
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("the stream ended while it was being read: %v", err)
		}
	}
	select {
	case err := <-ended:
		t.Fatalf("the stream ended while it was being read: %v", err)
	default:
	}
	stalled := time.Now()
	select {
	case <-ended:
		t.Logf("stalled reader cut off after %v (write limit 1 s)", time.Since(stalled).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("a reader that stopped reading held its stream for 10 s under a 1 s write limit")
	}
}

// Connections from many addresses stop at the total, each address
// within its own cap, and the reserved address (loopback in a server:
// here 127.0.0.1 only) still gets in; a freed slot takes the next.
func TestTotalCapKeepsASpareForLoopback(t *testing.T) {
	old := spareFor
	spareFor = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	t.Cleanup(func() { spareFor = old })
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Limits{PerAddress: 2, Total: 4}.Listen(raw)
	defer ln.Close()
	accepted := acceptAll(t, ln)
	dialFrom := func(src string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closed says whether the server closed c without serving it.
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	var served []net.Conn // the server's side
	for _, src := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"} {
		dialFrom(src)
		served = append(served, <-accepted)
	}
	if c := dialFrom("127.0.0.2"); !closed(c) {
		t.Fatal("a third connection from one address was kept over its cap of two")
	}
	if c := dialFrom("127.0.0.4"); !closed(c) {
		t.Fatal("a fifth connection in all was kept over the total of four")
	}
	if c := dialFrom("127.0.0.1"); closed(c) {
		t.Fatal("loopback was shut out by the other addresses' connections")
	}
	<-accepted
	served[0].Close() // the server is done with one: its slot is free
	if c := dialFrom("127.0.0.4"); closed(c) {
		t.Fatal("a freed slot was not taken again")
	}
}

// acceptAll accepts from ln until it is closed, handing each connection
// on; those still open are closed when the test ends.
func acceptAll(t *testing.T, ln net.Listener) <-chan net.Conn {
	accepted := make(chan net.Conn, 20)
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			accepted <- c
		}
	}()
	return accepted
}
