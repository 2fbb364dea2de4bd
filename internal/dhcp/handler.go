package dhcp

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Handler is one link of the chain. It reads req, fills in resp and r, and
// returns true to stop the chain: after a drop, or when the reply is
// complete (a NAK needs nothing from later links).
type Handler func(req, resp *dhcpv4.DHCPv4, r *Request) (stop bool)

// Request is what the chain knows about one packet beyond its bytes.
// Earlier handlers fill fields that later ones rely on.
type Request struct {
	Ctx       context.Context
	Now       time.Time
	Size      int          // datagram length in bytes
	HLen      uint8        // hlen as sent: the parser clips it to 16
	LocalPort int          // 67, or 4011 for proxyDHCP boot-server requests
	Iface     []netip.Addr // IPv4 addresses of the receiving interface
	ServerIP  netip.Addr   // our identifier for this reply (option 54)
	Subnet    *Subnet      // chosen subnet; nil in proxy mode
	Host      *StaticHost  // the client's reservation, if any
	Boot      BootClient
	Event     Event // the outcome; Kind decides whether a reply is sent
	cfg       *state
}

// drop ends the chain without a reply and records why.
func (r *Request) drop(reason string) bool {
	r.Event.Kind, r.Event.Reason = EventDrop, reason
	return true
}

// state is a compiled Config: lookups built once per Reconfigure and the
// handler chain for its mode. Swapped atomically as a whole, so a request
// sees one consistent configuration from start to end.
type state struct {
	cfg     Config
	hosts   map[string]*StaticHost // by MAC
	hostIPs map[netip.Addr]*StaticHost
	chain   []Handler
}

func (s *Server) compile(cfg Config) (*state, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	st := &state{cfg: cfg, hosts: map[string]*StaticHost{}, hostIPs: map[netip.Addr]*StaticHost{}}
	for i := range st.cfg.Hosts {
		h := &st.cfg.Hosts[i]
		st.hosts[h.MAC.String()] = h
		st.hostIPs[h.IP] = h
	}
	if cfg.Proxy {
		st.chain = []Handler{validate, proxyOnly, boot, commonOptions}
	} else {
		st.chain = []Handler{validate, selectSubnet, s.leases, boot, commonOptions}
	}
	return st, nil
}

// subnetFor returns the configured subnet containing ip, or nil.
func (st *state) subnetFor(ip netip.Addr) *Subnet {
	for i := range st.cfg.Subnets {
		if st.cfg.Subnets[i].CIDR.Contains(ip) {
			return &st.cfg.Subnets[i]
		}
	}
	return nil
}

// run passes one parsed request through the chain.
func (st *state) run(req, resp *dhcpv4.DHCPv4, r *Request) {
	r.cfg = st
	for _, h := range st.chain {
		if h(req, resp, r) {
			return
		}
	}
}

// addr converts a header IP field; zero Addr for unset or 0.0.0.0.
func addr(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip.To4())
	if !ok || a.IsUnspecified() {
		return netip.Addr{}
	}
	return a
}
