// Package simboot is a simulated machine that boots from Anvil over the
// wire the way firmware, iPXE and Anvil's agent do: DHCPv4 for an
// address, the per-MAC iPXE config over HTTP (the default on 404), the
// kernel and initrd it names, then the agent's Hello and Enlist (or a
// commissioning run) against the metadata API the config names.
//
// Many machines share one Net: a single UDP socket on port 68 carries
// every machine's DHCP (each with its own chaddr and the broadcast flag,
// replies matched by xid), and one HTTP client carries their downloads
// and metadata calls. Both may live in a network namespace.
package simboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"golang.org/x/sys/unix"

	"github.com/anvilmetal/anvil/internal/netns"
)

// Net is the provisioning network as the simulated machines see it.
type Net struct {
	// HTTP fetches configs, kernels and initrds and carries the agent's
	// calls; its connections are made inside the namespace.
	HTTP *http.Client

	conn    *net.UDPConn
	addrs   *addrs
	mu      sync.Mutex
	pending map[uint32]chan *dhcpv4.DHCPv4
	dials   chan dialReq
	done    chan struct{}
	wg      sync.WaitGroup
}

// OpenNet opens the shared DHCP socket (port 68, bound to ifname,
// broadcast allowed) and an HTTP client, both inside network namespace
// ns ("" for the caller's own).
func OpenNet(ns, ifname string) (*Net, error) {
	n := &Net{pending: map[uint32]chan *dhcpv4.DHCPv4{}, done: make(chan struct{})}
	conn, err := netns.Call(ns, func() (*net.UDPConn, error) {
		return server4.NewIPv4UDPConn(ifname, &net.UDPAddr{Port: dhcpv4.ClientPort})
	})
	if err != nil {
		return nil, fmt.Errorf("simboot: DHCP socket on %s: %w", ifname, err)
	}
	n.conn = conn
	// A storm's replies arrive in a burst: a big buffer keeps the
	// simulator from being where they are lost (root may exceed rmem_max).
	if rc, err := conn.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20) != nil {
				_ = conn.SetReadBuffer(16 << 20)
			}
		})
	}
	if n.addrs, err = openAddrs(ns, ifname); err != nil {
		n.Close()
		return nil, fmt.Errorf("simboot: netlink: %w", err)
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return n.dialFrom(ctx, netip.Addr{}, network, addr)
	}
	if ns != "" {
		// A few threads live in the namespace and make every connection:
		// a socket belongs to the namespace it was created in.
		n.dials = make(chan dialReq)
		for range 4 {
			ready := make(chan error, 1)
			go n.dialer(ns, ready)
			if err := <-ready; err != nil {
				n.Close()
				return nil, err
			}
		}
	}
	n.HTTP = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: dial, MaxIdleConns: 512, MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second,
	}}
	n.wg.Add(1)
	go n.read()
	return n, nil
}

// Close ends the socket and the dialers.
func (n *Net) Close() {
	select {
	case <-n.done:
		return
	default:
	}
	close(n.done)
	if n.conn != nil {
		n.conn.Close()
	}
	if n.HTTP != nil {
		n.HTTP.CloseIdleConnections()
	}
	if n.addrs != nil {
		n.addrs.close()
	}
	n.wg.Wait()
}

// clientFrom is an HTTP client whose connections leave from src, which
// is first added to the interface.
func (n *Net) clientFrom(src netip.Addr) (*http.Client, error) {
	if err := n.addrs.add(src); err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return n.dialFrom(ctx, src, network, addr)
		},
		MaxIdleConnsPerHost: 2, IdleConnTimeout: 10 * time.Second,
	}}, nil
}

type dialReq struct {
	ctx           context.Context
	src           netip.Addr
	network, addr string
	res           chan dialRes
}

type dialRes struct {
	c   net.Conn
	err error
}

func (n *Net) dialer(ns string, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
	if err := netns.Enter(ns); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for {
		select {
		case <-n.done:
			return
		case r := <-n.dials:
			// The socket is created here, on this thread; the connect
			// itself waits in the poller.
			c, err := dialer(r.src).DialContext(r.ctx, r.network, r.addr)
			r.res <- dialRes{c, err}
		}
	}
}

func dialer(src netip.Addr) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if src.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	return d
}

func (n *Net) dialFrom(ctx context.Context, src netip.Addr, network, addr string) (net.Conn, error) {
	if n.dials == nil {
		return dialer(src).DialContext(ctx, network, addr)
	}
	r := dialReq{ctx: ctx, src: src, network: network, addr: addr, res: make(chan dialRes, 1)}
	select {
	case n.dials <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-n.done:
		return nil, net.ErrClosed
	}
	res := <-r.res
	return res.c, res.err
}

// read hands each reply to the exchange waiting for its xid.
func (n *Net) read() {
	defer n.wg.Done()
	buf := make([]byte, 4096)
	for {
		k, _, err := n.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(time.Millisecond)
			continue
		}
		m, err := dhcpv4.FromBytes(buf[:k])
		if err != nil || m.OpCode != dhcpv4.OpcodeBootReply {
			continue
		}
		n.mu.Lock()
		ch := n.pending[xidKey(m.TransactionID)]
		n.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
	}
}

func xidKey(x dhcpv4.TransactionID) uint32 {
	return uint32(x[0])<<24 | uint32(x[1])<<16 | uint32(x[2])<<8 | uint32(x[3])
}

// exchange broadcasts req (unless drop says this one is lost) and waits
// up to wait for a reply with its xid and one of the wanted types.
func (n *Net) exchange(ctx context.Context, req *dhcpv4.DHCPv4, drop bool, wait time.Duration, want ...dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
	key := xidKey(req.TransactionID)
	ch := make(chan *dhcpv4.DHCPv4, 4)
	n.mu.Lock()
	n.pending[key] = ch
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.pending, key)
		n.mu.Unlock()
	}()
	if !drop {
		if _, err := n.conn.WriteTo(req.ToBytes(), &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ServerPort}); err != nil {
			return nil, err
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case m := <-ch:
			for _, w := range want {
				if m.MessageType() == w {
					return m, nil
				}
			}
			if m.MessageType() == dhcpv4.MessageTypeNak {
				return nil, fmt.Errorf("DHCPNAK: %s", m.Message())
			}
		case <-t.C:
			return nil, errTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

var errTimeout = errors.New("no reply")
