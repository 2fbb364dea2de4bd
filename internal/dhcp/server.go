package dhcp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Server is a DHCPv4 server. Create it with NewServer; it is safe for
// concurrent use, and Reconfigure may be called while it serves.
type Server struct {
	store    LeaseStore
	state    atomic.Pointer[state]
	peers    atomic.Pointer[peerTable] // nil until SetPeerLeases
	stats    counters
	alloc    allocator
	observer Observer
	log      *slog.Logger
	now      func() time.Time

	mu     sync.Mutex
	conns  []net.PacketConn
	closed bool

	// listening, if set, is called once ListenAndServe's sockets are
	// bound, so tests know when clients may start.
	listening func()
}

// Option configures a Server at creation.
type Option func(*Server)

// WithObserver registers fn to be told about every handled request.
func WithObserver(fn Observer) Option { return func(s *Server) { s.observer = fn } }

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithClock replaces time.Now, for tests of expiry.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// NewServer validates cfg and returns a server that keeps leases in store.
func NewServer(cfg Config, store LeaseStore, opts ...Option) (*Server, error) {
	if store == nil {
		return nil, errors.New("dhcp: nil lease store")
	}
	s := &Server{store: store, log: slog.Default(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if err := s.Reconfigure(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// Reconfigure validates cfg and swaps it in atomically: requests already
// in the chain finish under the old configuration, later ones see the new.
// Leases are untouched; an address that left the pools is simply not
// renewed (its client is NAKed and moves on).
func (s *Server) Reconfigure(cfg Config) error {
	st, err := s.compile(cfg)
	if err != nil {
		return err
	}
	s.state.Store(st)
	return nil
}

// Config returns a copy of the configuration in force, defaults filled in.
func (s *Server) Config() Config { return s.state.Load().cfg.clone() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats { return s.stats.snapshot() }

// Packet is one datagram as received: its bytes and where it came from
// and arrived.
type Packet struct {
	Data      []byte
	Peer      *net.UDPAddr
	LocalPort int          // 67 or PXEPort
	Iface     []netip.Addr // IPv4 addresses of the receiving interface
}

// Handle runs one datagram through parsing and the handler chain. It
// returns the reply and where to send it, or nil if there is none. It
// never panics on any input; that is what FuzzHandle checks.
func (s *Server) Handle(ctx context.Context, p Packet) ([]byte, *net.UDPAddr) {
	s.stats.received.Add(1)
	r := &Request{Ctx: ctx, Now: s.now(), Size: len(p.Data), LocalPort: p.LocalPort, Iface: p.Iface}
	r.Event.Arch = ArchUnknown
	req, err := dhcpv4.FromBytes(p.Data)
	if err != nil {
		r.drop(DropParse)
		s.finish(r)
		return nil, nil
	}
	r.HLen = p.Data[2]
	st := s.state.Load()
	r.Event.MAC = req.ClientHWAddr
	if r.Host = st.hosts[req.ClientHWAddr.String()]; r.Host != nil {
		r.Event.Static = true
	}
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		r.drop(DropParse)
		s.finish(r)
		return nil, nil
	}
	st.run(req, resp, r)
	var out []byte
	var dst *net.UDPAddr
	switch r.Event.Kind {
	case EventOffer, EventAck, EventNak:
		out, dst = resp.ToBytes(), replyAddr(req, resp, p)
	case "":
		r.drop(DropNotForUs) // a chain that decided nothing: answer nothing
	}
	s.finish(r)
	return out, dst
}

func (s *Server) finish(r *Request) {
	s.stats.count(&r.Event)
	if s.observer != nil {
		s.observer(r.Event)
	}
	if r.Event.Kind == EventDrop {
		s.log.Debug("dhcp: drop", "reason", r.Event.Reason, "mac", r.Event.MAC)
	} else {
		s.log.Debug("dhcp: reply", "kind", r.Event.Kind, "mac", r.Event.MAC, "ip", r.Event.IP, "boot_file", r.Event.BootFile)
	}
}

// replyAddr applies RFC 2131 4.1's rules for where a reply goes.
func replyAddr(req, resp *dhcpv4.DHCPv4, p Packet) *net.UDPAddr {
	bcast := &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ClientPort}
	switch {
	case p.LocalPort == PXEPort && p.Peer != nil:
		return p.Peer // boot-server requests come from a configured client
	case addr(req.GatewayIPAddr).IsValid():
		return &net.UDPAddr{IP: req.GatewayIPAddr.To4(), Port: dhcpv4.ServerPort}
	case resp.MessageType() == dhcpv4.MessageTypeNak:
		return bcast
	case addr(req.ClientIPAddr).IsValid():
		port := dhcpv4.ClientPort
		if p.Peer != nil && p.Peer.IP.Equal(req.ClientIPAddr) {
			port = p.Peer.Port
		}
		return &net.UDPAddr{IP: req.ClientIPAddr.To4(), Port: port}
	}
	// A client without an address can only be reached by broadcast, or by
	// unicast to yiaddr after planting an ARP entry, which needs a raw
	// socket; every client accepts the broadcast.
	return bcast
}
