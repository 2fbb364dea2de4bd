package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// workers per socket: enough to overlap lease-store fsyncs, few enough
// that a flood queues in the kernel's socket buffer (and is dropped
// there) instead of piling up goroutines.
const workers = 4

// recvBuffer is the socket receive buffer asked for: a site powering on
// at once sends bursts of thousands of DISCOVERs, which the default
// (about 200 KiB, some 100 packets) drops, costing each dropped client a
// retransmission seconds later. Above this, drops are the flood guard.
const recvBuffer = 4 << 20

// ListenAndServe serves on interface ifname: port 67, plus PXEPort when
// the configuration at the time of the call is in proxy mode. Sockets are
// bound to the interface (SO_BINDTODEVICE) so broadcasts go out and come
// in on it alone. The interface's addresses are read once, here: change
// them and the server must be restarted (or Config.ServerIP set).
func (s *Server) ListenAndServe(ifname string) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	iface, err := ifaceAddrs(ifi)
	if err != nil {
		return err
	}
	ports := []int{dhcpv4.ServerPort}
	if s.Config().Proxy {
		ports = append(ports, PXEPort)
	}
	var conns []net.PacketConn
	for _, port := range ports {
		c, err := server4.NewIPv4UDPConn(ifname, &net.UDPAddr{Port: port})
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return fmt.Errorf("dhcp: listening on %s port %d: %w", ifname, port, err)
		}
		setRecvBuffer(c)
		conns = append(conns, c)
	}
	if err := s.track(conns...); err != nil {
		return err
	}
	errs := make(chan error, len(conns))
	for _, c := range conns {
		go func() { errs <- s.serve(c, iface) }()
	}
	if s.listening != nil {
		s.listening()
	}
	err = <-errs
	for _, c := range conns {
		c.Close()
	}
	for range conns[1:] {
		<-errs
	}
	return err
}

// Serve answers requests arriving on conn until Close. The conn should
// allow broadcast (it is enabled here when conn is a *net.UDPConn); the
// interface's subnet is taken from conn's local address, else from
// Config.ServerIP.
func (s *Server) Serve(conn net.PacketConn) error {
	var iface []netip.Addr
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		if a := addr(ua.IP); a.IsValid() {
			iface = []netip.Addr{a}
		}
	}
	if uc, ok := conn.(*net.UDPConn); ok {
		if rc, err := uc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1)
			})
		}
	}
	setRecvBuffer(conn)
	if err := s.track(conn); err != nil {
		return err
	}
	return s.serve(conn, iface)
}

// track registers conns for Close; it refuses (closing them) once the
// server is closed, so a Close racing a start cannot leave a socket open.
func (s *Server) track(conns ...net.PacketConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		for _, c := range conns {
			c.Close()
		}
		return net.ErrClosed
	}
	s.conns = append(s.conns, conns...)
	return nil
}

func (s *Server) serve(conn net.PacketConn, iface []netip.Addr) error {
	port := 0
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		port = ua.Port
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.worker(conn, port, iface)
		}()
	}
	wg.Wait()
	err := <-errs
	if errors.Is(err, net.ErrClosed) && s.isClosed() {
		return nil
	}
	return err
}

func (s *Server) worker(conn net.PacketConn, port int, iface []netip.Addr) error {
	// One byte more than accepted, so an oversized datagram is seen as
	// such instead of silently truncated into something parseable.
	buf := make([]byte, maxPacket+1)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return err
			}
			// Transient (e.g. an ICMP error surfacing on the socket); the
			// pause keeps a persistent one from spinning a core.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		up, _ := peer.(*net.UDPAddr)
		out, dst := s.Handle(context.Background(), Packet{Data: buf[:n], Peer: up, LocalPort: port, Iface: iface})
		if out == nil {
			continue
		}
		if _, err := conn.WriteTo(out, dst); err != nil {
			s.stats.count(&Event{Kind: EventDrop, Reason: DropSendError})
			s.log.Debug("dhcp: send", "to", dst, "err", err)
		}
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops every Serve and ListenAndServe; the lease store is the
// caller's to close.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var err error
	for _, c := range s.conns {
		err = errors.Join(err, c.Close())
	}
	s.conns = nil
	return err
}

func ifaceAddrs(ifi *net.Interface) ([]netip.Addr, error) {
	as, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range as {
		if ipn, ok := a.(*net.IPNet); ok {
			if v, ok := netip.AddrFromSlice(ipn.IP.To4()); ok {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// setRecvBuffer raises the socket's receive buffer to recvBuffer: beyond
// the system's cap when the process may (root), else as far as the cap.
func setRecvBuffer(c net.PacketConn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		if syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, recvBuffer) != nil {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, recvBuffer)
		}
	})
}
