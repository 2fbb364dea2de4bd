package dhcp

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Defaults applied by Config.normalize when a field is left zero.
const (
	DefaultLeaseTime   = time.Hour
	DefaultOfferHold   = 30 * time.Second
	DefaultDeclineHold = 10 * time.Minute
)

// Range is an inclusive range of IPv4 addresses.
type Range struct {
	Start, End netip.Addr
}

// Contains reports whether ip lies within r, bounds included.
func (r Range) Contains(ip netip.Addr) bool {
	return r.Start.Compare(ip) <= 0 && ip.Compare(r.End) <= 0
}

// Subnet is one IPv4 network the server answers for.
type Subnet struct {
	CIDR       netip.Prefix
	Gateway    netip.Addr
	DNS        []netip.Addr
	DomainName string
	// RackDNS puts the server's own address first among the DNS servers
	// (the rack answers DNS there): MAAS's allow_dns. Without a gateway
	// only an address inside the subnet is given, as MAAS does.
	RackDNS bool
	// Search is the domain search list (option 119).
	Search []string
	// Dynamic are the pools addresses are handed out from.
	Dynamic []Range
	// Reserved addresses are never handed out dynamically, even inside a
	// Dynamic range (MAAS "reserved" ranges cut holes in pools).
	Reserved []Range
	// Peer are the dynamic addresses a partner server hands out on the
	// same network (its share of ranges split between two racks): this
	// server offers none of them, and confirms one only to the client the
	// partner leased it to (see peer.go).
	Peer      []Range
	LeaseTime time.Duration
	// Enabled turns DHCP on for this subnet; a disabled subnet is known
	// (so relayed traffic for it is recognised) but never answered.
	Enabled bool
}

// StaticHost pins a MAC to an address: known machines keep one address
// across reinstalls, as MAAS does for deployed machines with static IPs.
type StaticHost struct {
	MAC      net.HardwareAddr
	IP       netip.Addr
	Hostname string
}

// Config is everything a Server needs besides its lease store. It is
// copied and validated by NewServer and Reconfigure; callers may keep
// mutating their own copy afterwards.
type Config struct {
	Subnets []Subnet
	Hosts   []StaticHost
	// ServerIP is the server identifier (option 54). Zero means the first
	// IPv4 address of the interface the request arrived on.
	ServerIP netip.Addr
	// NextServer is siaddr / option 66, the TFTP and HTTP boot server.
	// Zero means the server identifier.
	NextServer netip.Addr
	Boot       BootFiles
	// Proxy selects proxyDHCP mode: boot information only, no addresses,
	// PXE clients only.
	Proxy bool
	// OfferHold is how long an offered address stays reserved for the
	// client it was offered to, so two clients racing for the last free
	// address never both receive it.
	OfferHold time.Duration
	// DeclineHold is how long an address a client DECLINEd (found in use
	// by someone else) is kept out of the pool.
	DeclineHold time.Duration
}

// normalize returns a deep-enough copy of c with defaults filled in, or an
// error naming the first inconsistency. Doing it once per Reconfigure keeps
// the per-packet path free of checks.
func (c Config) normalize() (Config, error) {
	out := c.clone()
	out.Boot = c.Boot.withDefaults()
	if out.OfferHold <= 0 {
		out.OfferHold = DefaultOfferHold
	}
	if out.DeclineHold <= 0 {
		out.DeclineHold = DefaultDeclineHold
	}
	for _, a := range []netip.Addr{c.ServerIP, c.NextServer} {
		if a.IsValid() && !a.Is4() {
			return Config{}, fmt.Errorf("dhcp: %s is not an IPv4 address", a)
		}
	}
	for i := range out.Subnets {
		sn := &out.Subnets[i]
		if err := sn.check(); err != nil {
			return Config{}, err
		}
		sn.CIDR = sn.CIDR.Masked()
		if sn.LeaseTime <= 0 {
			sn.LeaseTime = DefaultLeaseTime
		}
		for j := range out.Subnets[:i] {
			if out.Subnets[j].CIDR.Overlaps(sn.CIDR) {
				return Config{}, fmt.Errorf("dhcp: subnets %s and %s overlap", out.Subnets[j].CIDR, sn.CIDR)
			}
		}
	}
	macs := map[string]bool{}
	ips := map[netip.Addr]bool{}
	for i, h := range out.Hosts {
		if len(h.MAC) == 0 || !h.IP.Is4() {
			return Config{}, fmt.Errorf("dhcp: static host %d needs a MAC and an IPv4 address", i)
		}
		if macs[h.MAC.String()] || ips[h.IP] {
			return Config{}, fmt.Errorf("dhcp: static host %s/%s duplicates another", h.MAC, h.IP)
		}
		macs[h.MAC.String()], ips[h.IP] = true, true
	}
	return out, nil
}

// clone copies every slice, so neither the caller's later edits nor a
// caller of Server.Config can race with requests reading the original.
func (c Config) clone() Config {
	out := c
	out.Subnets = slices.Clone(c.Subnets)
	for i := range out.Subnets {
		sn := &out.Subnets[i]
		sn.DNS, sn.Dynamic, sn.Reserved = slices.Clone(sn.DNS), slices.Clone(sn.Dynamic), slices.Clone(sn.Reserved)
		sn.Peer = slices.Clone(sn.Peer)
		sn.Search = slices.Clone(sn.Search)
	}
	out.Hosts = slices.Clone(c.Hosts)
	for i := range out.Hosts {
		out.Hosts[i].MAC = slices.Clone(out.Hosts[i].MAC)
	}
	return out
}

func (sn *Subnet) check() error {
	if !sn.CIDR.IsValid() || !sn.CIDR.Addr().Is4() || sn.CIDR.Bits() > 30 {
		return fmt.Errorf("dhcp: subnet %s: need an IPv4 prefix of /30 or shorter", sn.CIDR)
	}
	if sn.Gateway.IsValid() && !sn.CIDR.Contains(sn.Gateway) {
		return fmt.Errorf("dhcp: subnet %s: gateway %s outside it", sn.CIDR, sn.Gateway)
	}
	for _, rs := range [][]Range{sn.Dynamic, sn.Reserved, sn.Peer} {
		for _, r := range rs {
			if !r.Start.Is4() || !r.End.Is4() || r.End.Less(r.Start) {
				return fmt.Errorf("dhcp: subnet %s: bad range %s-%s", sn.CIDR, r.Start, r.End)
			}
			if !sn.CIDR.Contains(r.Start) || !sn.CIDR.Contains(r.End) {
				return fmt.Errorf("dhcp: subnet %s: range %s-%s outside it", sn.CIDR, r.Start, r.End)
			}
		}
	}
	for _, p := range sn.Peer {
		for _, d := range sn.Dynamic {
			if p.Start.Compare(d.End) <= 0 && d.Start.Compare(p.End) <= 0 {
				return fmt.Errorf("dhcp: subnet %s: partner's range %s-%s overlaps own range %s-%s", sn.CIDR, p.Start, p.End, d.Start, d.End)
			}
		}
	}
	for _, d := range sn.DNS {
		if !d.Is4() {
			return errors.New("dhcp: DNS servers must be IPv4 addresses")
		}
	}
	for _, d := range sn.Search {
		if !searchName(d) {
			return fmt.Errorf("dhcp: subnet %s: %q is not a domain name", sn.CIDR, d)
		}
	}
	return nil
}

// searchName says whether d encodes as option 119 wants: labels of 1 to
// 63 octets, 253 in all.
func searchName(d string) bool {
	d = strings.TrimSuffix(d, ".")
	if d == "" || len(d) > 253 {
		return false
	}
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
	}
	return true
}

// broadcast is the subnet's directed broadcast address.
func (sn *Subnet) broadcast() netip.Addr {
	a := sn.CIDR.Addr().As4()
	bits := sn.CIDR.Bits()
	for i := range 4 {
		for b := range 8 {
			if i*8+b >= bits {
				a[i] |= 0x80 >> b
			}
		}
	}
	return netip.AddrFrom4(a)
}

// mask is the subnet mask in the form option 1 wants.
func (sn *Subnet) mask() net.IPMask {
	return net.CIDRMask(sn.CIDR.Bits(), 32)
}

func inRanges(rs []Range, ip netip.Addr) bool {
	for _, r := range rs {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}
