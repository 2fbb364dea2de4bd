package rack

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/anvilmetal/anvil/internal/dhcp"
	"github.com/anvilmetal/anvil/internal/network"
)

// dhcpConfig turns the region's subnets into the DHCP server's
// configuration; a subnet that does not parse is skipped and logged, so
// one bad row cannot stop DHCP for the others. iPXE is sent to the boot
// URL's ipxe.cfg (bootBase), or to port 5248 of the DHCP server without
// HTTP boot here. rackDNS says the rack answers DNS where DHCP serves,
// so subnets that allow DNS are given its address.
func dhcpConfig(subnets []Subnet, serverIP netip.Addr, bootBase string, boot dhcp.BootFiles, proxy, rackDNS bool, log *slog.Logger) dhcp.Config {
	if boot.IPXE == "" {
		boot.IPXE = "http://{server}:5248/ipxe.cfg"
		if bootBase != "" {
			boot.IPXE = bootBase + "/ipxe.cfg"
		}
	}
	cfg := dhcp.Config{ServerIP: serverIP, Proxy: proxy, Boot: boot}
	// The server's own address is never a client's, whatever a row says.
	macs, ips := map[string]bool{}, map[netip.Addr]bool{serverIP: true}
	for _, s := range subnets {
		d, err := convertSubnet(s)
		d.RackDNS = rackDNS && s.AllowDNS
		if err != nil {
			log.Error("subnet not served", "cidr", s.CIDR, "err", err)
			continue
		}
		cfg.Subnets = append(cfg.Subnets, d)
		cfg.Hosts = appendHosts(cfg.Hosts, d.CIDR, s.Hosts, macs, ips)
	}
	return cfg
}

// appendHosts adds the subnet's fixed leases the DHCP server can keep:
// IPv4 addresses inside the subnet, one per MAC and per address (the
// first wins; the server refuses a configuration with duplicates, which
// would stop DHCP for every subnet).
func appendHosts(out []dhcp.StaticHost, cidr netip.Prefix, hosts []Host, macs map[string]bool, ips map[netip.Addr]bool) []dhcp.StaticHost {
	for _, h := range hosts {
		mac, err := net.ParseMAC(h.MAC)
		ip, err2 := netip.ParseAddr(h.IP)
		if err != nil || err2 != nil || !ip.Is4() || !cidr.Contains(ip) || macs[mac.String()] || ips[ip] {
			continue
		}
		macs[mac.String()], ips[ip] = true, true
		out = append(out, dhcp.StaticHost{MAC: mac, IP: ip, Hostname: h.Hostname})
	}
	return out
}

func convertSubnet(s Subnet) (dhcp.Subnet, error) {
	p, err := netip.ParsePrefix(s.CIDR)
	if err != nil {
		return dhcp.Subnet{}, err
	}
	d := dhcp.Subnet{CIDR: p, DomainName: s.Domain, Search: s.Search, Enabled: s.DHCP, LeaseTime: time.Duration(network.LeaseSeconds(s.LeaseSeconds)) * time.Second}
	if s.Gateway != "" {
		if d.Gateway, err = netip.ParseAddr(s.Gateway); err != nil {
			return d, err
		}
	}
	for _, a := range s.DNS {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return d, err
		}
		d.DNS = append(d.DNS, ip)
	}
	conv := func(rs [][2]string) ([]dhcp.Range, error) {
		var out []dhcp.Range
		for _, r := range rs {
			a, err1 := netip.ParseAddr(r[0])
			b, err2 := netip.ParseAddr(r[1])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad range %s-%s", r[0], r[1])
			}
			out = append(out, dhcp.Range{Start: a, End: b})
		}
		return out, nil
	}
	if d.Dynamic, err = conv(s.Dynamic); err != nil {
		return d, err
	}
	if d.Peer, err = conv(s.Peer); err != nil {
		return d, err
	}
	d.Reserved, err = conv(s.Reserved)
	return d, err
}

// servesDNSAt says whether DNS bound at addr answers clients at ip:
// on port 53, the only one a DHCP client can be told, and on ip or on
// every address (ip zero: the interface's own, whichever it is).
func servesDNSAt(addr net.Addr, ip netip.Addr) bool {
	if addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil || ap.Port() != 53 {
		return false
	}
	return ap.Addr().IsUnspecified() || (ip.IsValid() && ap.Addr().Unmap() == ip)
}

// dnsAddrs are the addresses clients can be given for DNS bound at
// addr. Bound to every address, the rack answers at each of the host's
// (host, from its interfaces now): the DHCP server's first (when set),
// then the others, so a machine on any subnet the rack sits on can be
// pointed at the rack's address there. Else the one address bound, on
// port 53.
func dnsAddrs(addr net.Addr, dhcpIP netip.Addr, host []netip.Addr) []netip.Addr {
	if addr == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil || ap.Port() != 53 || ap.Addr().IsLoopback() {
		return nil
	}
	if !ap.Addr().IsUnspecified() {
		return []netip.Addr{ap.Addr().Unmap()}
	}
	var out []netip.Addr
	if dhcpIP.IsValid() && !dhcpIP.IsLoopback() {
		out = append(out, dhcpIP)
	}
	v4only := ap.Addr().Is4() // 0.0.0.0 answers on IPv4 alone
	for _, a := range host {
		if a = a.Unmap(); a.IsGlobalUnicast() && (a.Is4() || !v4only) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// statusAddrs are the addresses of a status report's interfaces that are
// up.
func statusAddrs(ifs []StatusInterface) []netip.Addr {
	var out []netip.Addr
	for _, i := range ifs {
		if !i.Up {
			continue
		}
		for _, a := range i.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil {
				out = append(out, p.Addr())
			}
		}
	}
	return out
}

// dhcpObserver turns DHCP events into boot events on machines (or
// discoveries of unknown MACs).
func dhcpObserver(rep *Reporter) func(dhcp.Event) {
	return func(e dhcp.Event) {
		if e.MAC == nil || (e.Kind != dhcp.EventOffer && e.Kind != dhcp.EventAck && e.Kind != dhcp.EventNak) {
			return
		}
		detail := fmt.Sprintf("%s %s", e.Kind, e.IP)
		if e.BootFile != "" {
			detail += ", boot file " + e.BootFile
		}
		ip := ""
		if e.IP.IsValid() {
			ip = e.IP.String()
		}
		rep.Add(BootEvent{MAC: e.MAC.String(), IP: ip, Kind: "dhcp", Detail: detail, At: time.Now()})
	}
}
