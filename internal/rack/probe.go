package rack

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/powerroute"
)

// How long a probe's answer is believed: a BMC that answered is not asked
// again for a minute; one that did not is left to other racks for a while,
// after which this rack may claim its requests and probe again.
const (
	probeOKFor  = time.Minute
	probeBadFor = 15 * time.Second
	probeWait   = time.Second
)

// ProbeTarget is how a BMC is probed cheaply: an RMCP presence ping to an
// IPMI BMC's UDP port, a TCP connection to an HTTP BMC's port. ok is false
// for a BMC that is not probed (no network address: manual power).
func ProbeTarget(bmcKey string) (network, addr string, ok bool) {
	typ, rest, found := strings.Cut(bmcKey, "://")
	host := powerroute.Host(bmcKey)
	if !found || host == "" {
		return "", "", false
	}
	if typ == "ipmi" {
		_, port, err := net.SplitHostPort(rest)
		if err != nil {
			port = "623"
		}
		return "udp", net.JoinHostPort(host, port), true
	}
	// redfish://https://host:port, webhook://http://host:port/...
	scheme, hostport, _ := strings.Cut(rest, "://")
	if i := strings.IndexAny(hostport, "/?#"); i >= 0 {
		hostport = hostport[:i]
	}
	if at := strings.LastIndex(hostport, "@"); at >= 0 {
		hostport = hostport[at+1:]
	}
	if _, port, err := net.SplitHostPort(hostport); err == nil {
		return "tcp", net.JoinHostPort(host, port), true
	}
	if scheme == "http" {
		return "tcp", net.JoinHostPort(host, "80"), true
	}
	return "tcp", net.JoinHostPort(host, "443"), true
}

// rmcpPing is an ASF presence ping (RMCP class 6, message type 0x80),
// which IPMI BMCs answer without a session.
var rmcpPing = []byte{0x06, 0x00, 0xff, 0x06, 0x00, 0x00, 0x11, 0xbe, 0x80, 0x41, 0x00, 0x00}

// Probe checks once that the BMC answers: a pong to an RMCP ping, or an
// accepted TCP connection.
func Probe(ctx context.Context, bmcKey string) error {
	network, addr, ok := ProbeTarget(bmcKey)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*probeWait)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return fmt.Errorf("probe %s %s: %w", network, addr, err)
	}
	defer c.Close()
	if network == "tcp" {
		return nil
	}
	buf := make([]byte, 64)
	for try := 0; try < 2; try++ {
		if _, err := c.Write(rmcpPing); err != nil {
			return fmt.Errorf("probe %s: %w", addr, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(probeWait))
		n, err := c.Read(buf)
		if err == nil && n >= 9 && bytes.Equal(buf[:4], rmcpPing[:4]) && buf[8] == 0x40 {
			return nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("probe %s: no answer to an RMCP ping", addr)
}

// probeCache remembers probes' answers by BMC host, and which requests
// this rack gave back.
type probeCache struct {
	within func(func() error) error
	mu     sync.Mutex
	ok     map[string]time.Time // host → when it last answered
	bad    map[string]time.Time // host → when it last did not
	gave   map[string]time.Time // request id → when it was given back
}

func newProbeCache(within func(func() error) error) *probeCache {
	if within == nil {
		within = func(fn func() error) error { return fn() }
	}
	return &probeCache{within: within, ok: map[string]time.Time{}, bad: map[string]time.Time{}, gave: map[string]time.Time{}}
}

// probe is Probe, believed for probeOKFor when the BMC answered.
func (p *probeCache) probe(ctx context.Context, bmcKey string) error {
	host, now := powerroute.Host(bmcKey), time.Now()
	p.mu.Lock()
	at, ok := p.ok[host]
	p.mu.Unlock()
	if ok && now.Sub(at) < probeOKFor {
		return nil
	}
	if err := p.within(func() error { return Probe(ctx, bmcKey) }); err != nil {
		return err
	}
	p.mu.Lock()
	p.ok[host] = now
	delete(p.bad, host)
	p.mu.Unlock()
	return nil
}

// fail notes that the BMC did not answer.
func (p *probeCache) fail(host string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bad[host] = now
	delete(p.ok, host)
}

// unreachable lists the hosts that did not answer lately, for the claim.
func (p *probeCache) unreachable(now time.Time) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for h, at := range p.bad {
		if now.Sub(at) >= probeBadFor {
			delete(p.bad, h)
			continue
		}
		out = append(out, h)
	}
	return out
}

// giveBack says whether request id should be given back after a failed
// probe: the first time, yes; when it comes back to this rack after that,
// no rack has reached its BMC meanwhile and this one runs it, so that it
// fails as unreachable instead of travelling between racks forever.
func (p *probeCache) giveBack(id string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, at := range p.gave {
		if now.Sub(at) > 10*time.Minute {
			delete(p.gave, k)
		}
	}
	if _, again := p.gave[id]; again {
		return false
	}
	p.gave[id] = now
	return true
}

// InterfaceNetworks are the subnets of this host's interfaces (link-local
// ones aside): the BMC networks a rack reaches without being told.
func InterfaceNetworks() ([]netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("interface addresses: %w", err)
	}
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok || ip.Unmap().IsLinkLocalUnicast() {
			continue
		}
		ones, _ := n.Mask.Size()
		ip = ip.Unmap()
		if ip.Is4() && ones > 32 {
			ones -= 96
		}
		out = append(out, netip.PrefixFrom(ip, ones).Masked())
	}
	return out, nil
}
