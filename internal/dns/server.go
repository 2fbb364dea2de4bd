// Package dns is the racks' DNS server: authoritative for Anvil's zones
// (built by package dnszone from what the region streams), forwarding for
// clients on managed subnets when upstream_dns is set, and refusing
// everyone else. It reads one immutable snapshot per query, swapped whole
// on every change, so answers never wait on the region or on a lock.
package dns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dnssec"
	"github.com/anvilmetal/anvil/internal/dnszone"
)

// Data is what the region sends a rack for DNS.
type Data struct {
	Zones dnszone.Input `json:"zones"`
	// Upstream are the resolvers to forward to (upstream_dns); none
	// means no recursion for anyone.
	Upstream []string `json:"upstream,omitempty"`
	// Trusted are the networks that may transfer zones and recurse
	// beyond the managed subnets (dns_trusted_acl).
	Trusted []string `json:"trusted,omitempty"`
	// DNSSEC is dnssec_validation: "no" forwards answers as they come;
	// "yes" and "auto" (the default) validate them.
	DNSSEC string `json:"dnssec,omitempty"`
}

// state is one snapshot: zones and who may do what.
type state struct {
	zones    *dnszone.Zones
	upstream []string
	trusted  []netip.Prefix
	managed  []netip.Prefix
	// validator checks forwarded answers; nil when dnssec_validation
	// is "no". It is kept across snapshots while the upstreams stay, for
	// the keys it has cached.
	validator *dnssec.Validator
}

// Server answers DNS queries from the snapshot it holds.
type Server struct {
	st  atomic.Pointer[state]
	log *slog.Logger
	fwd *dns.Client
	// servers are those ListenAndServe started.
	servers []*dns.Server
	// mu orders Set and SetTrustAnchors; anchors are the validator's
	// trust anchors (none: the root's).
	mu      sync.Mutex
	anchors []string
	// limits and g bound what clients draw (SetLimits).
	limits Limits
	g      *guards
}

// New returns a server with no zones: it refuses everything until Set.
func New(log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, fwd: &dns.Client{Timeout: 2 * time.Second}}
	s.SetLimits(Limits{})
	s.st.Store(&state{zones: dnszone.Build(dnszone.Input{})})
	return s
}

// SetLimits sets the server's limits (zero fields take Defaults); it is
// called before Serve.
func (s *Server) SetLimits(l Limits) {
	s.limits = l.WithDefaults()
	s.g = newGuards(s.limits)
}

// Set builds the zones from d and swaps them in.
func (s *Server) Set(d Data) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &state{zones: dnszone.Build(d.Zones)}
	for _, u := range d.Upstream {
		if a, err := netip.ParseAddr(u); err == nil {
			st.upstream = append(st.upstream, net.JoinHostPort(a.String(), "53"))
		} else if _, _, err := net.SplitHostPort(u); err == nil {
			st.upstream = append(st.upstream, u)
		}
	}
	st.trusted = prefixes(d.Trusted)
	for _, sn := range d.Zones.Subnets {
		if sn.CIDR.IsValid() {
			st.managed = append(st.managed, sn.CIDR.Masked())
		}
	}
	if d.DNSSEC != "no" {
		if prev := s.st.Load(); prev.validator != nil && slices.Equal(prev.upstream, st.upstream) {
			st.validator = prev.validator
		} else {
			st.validator = s.newValidator(st.upstream)
		}
	}
	s.st.Store(st)
}

// Zones is the snapshot in use.
func (s *Server) Zones() *dnszone.Zones { return s.st.Load().zones }

func prefixes(ss []string) []netip.Prefix {
	var out []netip.Prefix
	for _, t := range ss {
		if p, err := netip.ParsePrefix(t); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(t); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

func within(ps []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
}

// ListenAndServe answers on addr over UDP and TCP (or on the given
// connections) until ctx ends. It returns once both are listening.
func (s *Server) ListenAndServe(ctx context.Context, addr string) (net.Addr, error) {
	_, port, _ := net.SplitHostPort(addr)
	for try := 0; ; try++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, fmt.Errorf("dns udp %s: %w", addr, err)
		}
		// TCP on the port UDP got, so that ":0" gives one port for both;
		// that port may be taken for TCP, so ":0" tries again.
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			if port == "0" && try < 20 {
				continue
			}
			return nil, fmt.Errorf("dns tcp %s: %w", addr, err)
		}
		s.Serve(ctx, pc, ln)
		return pc.LocalAddr(), nil
	}
}

// Serve answers on pc and ln until ctx ends.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, ln net.Listener) {
	udp := &dns.Server{PacketConn: pc, Handler: s, UDPSize: 65535}
	tcp := &dns.Server{Listener: s.limits.tcpListener(ln), Handler: s, ReadTimeout: 5 * time.Second, WriteTimeout: 10 * time.Second,
		// one query per read deadline; a client idle longer is dropped
		IdleTimeout: func() time.Duration { return 5 * time.Second }}
	for _, srv := range []*dns.Server{udp, tcp} {
		go func() {
			if err := srv.ActivateAndServe(); err != nil && !errors.Is(err, net.ErrClosed) {
				s.log.Error("dns server stopped", "err", err)
			}
		}()
	}
	go func() {
		<-ctx.Done()
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
	}()
}

// ServeDNS implements dns.Handler.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	client, tcp := clientOf(w.RemoteAddr())
	if !tcp {
		if limited, tc := s.g.rateLimited(client, r); limited {
			if tc != nil {
				_ = w.WriteMsg(tc)
			}
			return
		}
	}
	st := s.st.Load()
	if q, ok := single(r); ok && (q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR) {
		s.transfer(w, r, st, client, tcp)
		return
	}
	m := s.answer(st, r, client)
	if !tcp {
		udpLimits(r, m)
	}
	_ = w.WriteMsg(m)
}

// maxUDP is the largest UDP answer sent, whatever the client offers: the
// size that avoids fragmentation (DNS flag day 2020), and a bound on what a
// forged source address can draw onto someone else.
const maxUDP = 1232

// udpLimits keeps a UDP answer small: an ANY query gets one RRset (RFC
// 8482: the rest is a TCP query away), and the answer is truncated to the
// client's buffer, capped at maxUDP.
func udpLimits(r, m *dns.Msg) {
	if q, ok := single(r); ok && q.Qtype == dns.TypeANY && len(m.Answer) > 1 {
		first := m.Answer[0].Header().Rrtype
		keep := m.Answer[:0]
		for _, rr := range m.Answer {
			if rr.Header().Rrtype == first {
				keep = append(keep, rr)
			}
		}
		m.Answer = keep
	}
	size := dns.MinMsgSize
	if o := r.IsEdns0(); o != nil {
		size = min(max(int(o.UDPSize()), dns.MinMsgSize), maxUDP)
	}
	m.Truncate(size)
}

func clientOf(a net.Addr) (netip.Addr, bool) {
	switch a := a.(type) {
	case *net.UDPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap(), false
	case *net.TCPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return ip.Unmap(), true
	}
	return netip.Addr{}, false
}

func single(r *dns.Msg) (dns.Question, bool) {
	if r == nil || len(r.Question) != 1 {
		return dns.Question{}, false
	}
	return r.Question[0], true
}

// Answer is the answer to r from client over UDP, as the server gives it
// (transfers aside); the fuzz target calls it.
func (s *Server) Answer(r *dns.Msg, client netip.Addr) *dns.Msg {
	return s.answer(s.st.Load(), r, client)
}

// transfer sends a zone to a trusted client over TCP, and refuses anyone
// else: a zone transfer lists every machine.
func (s *Server) transfer(w dns.ResponseWriter, r *dns.Msg, st *state, client netip.Addr, tcp bool) {
	q := r.Question[0]
	z := st.zones.Find(q.Name)
	if !tcp || !within(st.trusted, client) || z == nil || z.Name != dns.CanonicalName(q.Name) {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		_ = w.WriteMsg(m)
		if z != nil {
			s.log.Debug("zone transfer refused", "zone", z.Name, "client", client)
		}
		return
	}
	ch := make(chan *dns.Envelope)
	tr := new(dns.Transfer)
	done := make(chan error, 1)
	go func() { done <- tr.Out(w, r, ch) }()
	rrs := z.Transfer()
	for len(rrs) > 0 {
		n := min(len(rrs), 500)
		ch <- &dns.Envelope{RR: rrs[:n]}
		rrs = rrs[n:]
	}
	close(ch)
	if err := <-done; err != nil {
		s.log.Debug("zone transfer ended", "zone", z.Name, "client", client, "err", err)
	}
	_ = w.Close()
}
