package dnszone

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// Build makes the zones: one per authoritative domain, and reverse zones
// for the subnets whose rdns_mode asks for them. Records that do not parse
// (the API validates them, so only data stored by hand) are left out.
func Build(in Input) *Zones {
	b := builder{in: in, zs: &Zones{Serial: in.Serial, zones: map[string]*Zone{}}, ttl: map[string]uint32{}}
	if b.in.DefaultTTL <= 0 {
		b.in.DefaultTTL = DefaultTTL
	}
	for _, d := range in.Domains {
		if !d.Authoritative {
			continue
		}
		z := newZone(d.Name)
		b.zs.zones[z.Name] = z
		b.ttl[z.Name] = ttlOr(d.TTL, uint32(b.in.DefaultTTL))
	}
	for _, h := range in.Hosts {
		b.host(h)
	}
	for _, r := range in.Resources {
		b.resource(r)
	}
	b.reverse()
	b.apex()
	return b.zs
}

type builder struct {
	in  Input
	zs  *Zones
	ttl map[string]uint32 // each forward zone's TTL
	// ptrs are the names each address is known by, for reverse zones.
	ptrs []ptr
}

type ptr struct {
	ip   netip.Addr
	name string
	ttl  uint32
}

func ttlOr(ttl int, def uint32) uint32 {
	if ttl > 0 && ttl <= MaxTTL {
		return uint32(ttl)
	}
	return def
}

func fqdn(name, domain string) string {
	if name == "" || name == "@" {
		return dns.CanonicalName(domain)
	}
	return dns.CanonicalName(name + "." + domain)
}

func (b *builder) zoneOf(domain string) (*Zone, uint32) {
	z := b.zs.zones[dns.CanonicalName(domain)]
	if z == nil {
		return nil, 0
	}
	return z, b.ttl[z.Name]
}

func (b *builder) address(z *Zone, owner string, ip netip.Addr, ttl uint32) {
	ip = ip.Unmap()
	hdr := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: ttl}
	if ip.Is4() {
		hdr.Rrtype = dns.TypeA
		z.add(&dns.A{Hdr: hdr, A: ip.AsSlice()})
	} else if ip.Is6() {
		hdr.Rrtype = dns.TypeAAAA
		z.add(&dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()})
	} else {
		return
	}
	b.ptrs = append(b.ptrs, ptr{ip: ip, name: dns.CanonicalName(owner), ttl: ttl})
}

// host names the boot interface's addresses host.domain and the others
// iface.host.domain; with no boot address, the first one is host.domain.
func (b *builder) host(h Host) {
	z, zttl := b.zoneOf(h.Domain)
	if z == nil || h.Name == "" {
		return
	}
	ttl := ttlOr(h.TTL, zttl)
	boot := slices.ContainsFunc(h.Addrs, func(a HostAddr) bool { return a.Boot })
	for i, a := range h.Addrs {
		owner := fqdn(h.Name, h.Domain)
		if !(a.Boot || !boot && i == 0) {
			if a.Iface == "" {
				continue
			}
			owner = fqdn(a.Iface+"."+h.Name, h.Domain)
		}
		b.address(z, owner, a.IP, ttl)
	}
}

func (b *builder) resource(r Resource) {
	z, zttl := b.zoneOf(r.Domain)
	if z == nil {
		return
	}
	owner := fqdn(r.Name, r.Domain)
	ttl := ttlOr(r.TTL, zttl)
	for _, ip := range r.IPs {
		b.address(z, owner, ip, ttl)
	}
	for _, rec := range r.Records {
		if rr := parseRecord(owner, z.Name, ttlOr(rec.TTL, zttl), rec); rr != nil {
			z.add(rr)
		}
	}
}

// parseRecord makes a record from MAAS's rrdata, names in it relative to
// the zone as in a zone file.
func parseRecord(owner, origin string, ttl uint32, rec Record) dns.RR {
	t := strings.ToUpper(rec.Type)
	hdr := dns.RR_Header{Name: owner, Class: dns.ClassINET, Ttl: ttl}
	if t == "TXT" {
		hdr.Rrtype = dns.TypeTXT
		return &dns.TXT{Hdr: hdr, Txt: splitTXT(rec.Data)}
	}
	if _, err := ValidRecord(t, rec.Data); err != nil {
		return nil
	}
	line := fmt.Sprintf("@ %d IN %s %s", ttl, t, rec.Data)
	zp := dns.NewZoneParser(strings.NewReader(line), origin, "")
	rr, ok := zp.Next()
	if !ok || zp.Err() != nil {
		return nil
	}
	rr.Header().Name = owner
	return rr
}

// splitTXT cuts TXT data into the 255-byte strings the wire carries.
func splitTXT(s string) []string {
	var out []string
	for len(s) > 255 {
		out = append(out, s[:255])
		s = s[255:]
	}
	return append(out, s)
}

// apex gives every zone its SOA and NS, and the name servers' addresses
// where their names fall in a zone.
func (b *builder) apex() {
	var ns []string
	for _, n := range b.in.NS {
		name := dns.CanonicalName(n.Name)
		if !slices.Contains(ns, name) {
			ns = append(ns, name)
		}
		if z := b.zs.Find(name); z != nil && n.IP.IsValid() {
			if rrs, _ := z.Lookup(name); len(rrs) == 0 {
				b.address(z, name, n.IP, uint32(b.in.DefaultTTL))
			}
		}
	}
	for _, z := range b.zs.zones {
		ttl := b.ttl[z.Name]
		if ttl == 0 {
			ttl = uint32(b.in.DefaultTTL)
		}
		servers := ns
		if len(servers) == 0 {
			servers = []string{z.Name}
		}
		z.SOA = &dns.SOA{
			Hdr: dns.RR_Header{Name: z.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: ttl},
			Ns:  servers[0], Mbox: "nobody." + z.Name, Serial: b.in.Serial,
			Refresh: 600, Retry: 1800, Expire: 604800, Minttl: ttl,
		}
		z.add(z.SOA)
		for _, s := range servers {
			z.add(&dns.NS{Hdr: dns.RR_Header{Name: z.Name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: ttl}, Ns: s})
		}
	}
}

// reverse makes the subnets' reverse zones and their PTRs.
func (b *builder) reverse() {
	type rz struct {
		sn     Subnet
		parent *Zone // the octet or nibble zone
		glue   *Zone // the RFC 2317 zone, if any
	}
	var rzs []rz
	for _, sn := range b.in.Subnets {
		if sn.RDNS == RDNSDisabled || !sn.CIDR.IsValid() {
			continue
		}
		sn.CIDR = sn.CIDR.Masked()
		for _, name := range reverseZones(sn.CIDR) {
			z := b.zs.zones[name]
			if z == nil {
				z = newZone(name)
				b.zs.zones[name] = z
				b.ttl[name] = uint32(b.in.DefaultTTL)
			}
			r := rz{sn: sn, parent: z}
			if sn.RDNS == RDNS2317 && sn.CIDR.Addr().Is4() && sn.CIDR.Bits() > 24 {
				a := sn.CIDR.Addr().As4()
				gname := fmt.Sprintf("%d-%d.%d.%d.%d.in-addr.arpa.", a[3], sn.CIDR.Bits(), a[2], a[1], a[0])
				if b.zs.zones[gname] == nil {
					b.zs.zones[gname] = newZone(gname)
					b.ttl[gname] = uint32(b.in.DefaultTTL)
				}
				r.glue = b.zs.zones[gname]
			}
			rzs = append(rzs, r)
		}
	}
	for _, p := range b.ptrs {
		for _, r := range rzs {
			if !r.sn.CIDR.Contains(p.ip) {
				continue
			}
			rev, _ := dns.ReverseAddr(p.ip.String())
			if !r.parent.has(rev) {
				continue
			}
			hdr := dns.RR_Header{Name: rev, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: p.ttl}
			if r.glue == nil {
				r.parent.add(&dns.PTR{Hdr: hdr, Ptr: p.name})
				break
			}
			last := strconv.Itoa(int(p.ip.As4()[3]))
			hdr.Name = last + "." + r.glue.Name
			r.glue.add(&dns.PTR{Hdr: hdr, Ptr: p.name})
			r.parent.add(&dns.CNAME{Hdr: dns.RR_Header{Name: rev, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: p.ttl}, Target: hdr.Name})
			break
		}
	}
}

// reverseZones names the zones a subnet's PTRs live in: IPv4 at octet
// boundaries (a /20 is sixteen /24 zones, a /26 lives in its /24), IPv6 at
// nibble boundaries.
func reverseZones(p netip.Prefix) []string {
	bits := p.Bits()
	if bits == 0 {
		return nil
	}
	zbits := (bits + 3) / 4 * 4
	if p.Addr().Is4() {
		zbits = min((bits+7)/8*8, 24)
	}
	n := 1 << max(zbits-bits, 0)
	base := netip.PrefixFrom(p.Addr(), min(bits, zbits)).Masked().Addr()
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, reverseName(base, zbits))
		base = addN(base, zbits, 1)
	}
	return out
}

// reverseName is the in-addr.arpa or ip6.arpa name of the first zbits of a.
func reverseName(a netip.Addr, zbits int) string {
	var labels []string
	if a.Is4() {
		b := a.As4()
		for i := zbits/8 - 1; i >= 0; i-- {
			labels = append(labels, strconv.Itoa(int(b[i])))
		}
		return strings.Join(labels, ".") + ".in-addr.arpa."
	}
	b := a.As16()
	for i := zbits/4 - 1; i >= 0; i-- {
		nib := b[i/2] >> 4
		if i%2 == 1 {
			nib = b[i/2] & 0xf
		}
		labels = append(labels, strconv.FormatUint(uint64(nib), 16))
	}
	return strings.Join(labels, ".") + ".ip6.arpa."
}

// addN adds n at bit position zbits of a (the next zone along).
func addN(a netip.Addr, zbits, n int) netip.Addr {
	b := a.AsSlice()
	i := (zbits - 1) / 8
	carry := n << ((8 - zbits%8) % 8)
	for ; i >= 0 && carry > 0; i-- {
		v := int(b[i]) + carry
		b[i], carry = byte(v), v>>8
	}
	out, _ := netip.AddrFromSlice(b)
	return out
}

// sortedOwners orders owners as a zone file would: the apex first, then
// in canonical DNS order (by labels from the right). Each name's key, its
// labels reversed, is made once: comparing split names cost 1.4 s of a
// 2.7 s build of 10,000 machines.
func sortedOwners(names map[string][]dns.RR) []string {
	type owner struct{ key, name string }
	keyed := make([]owner, 0, len(names))
	for n := range names {
		labels := dns.SplitDomainName(n)
		slices.Reverse(labels)
		keyed = append(keyed, owner{key: strings.Join(labels, "\x00"), name: n})
	}
	slices.SortFunc(keyed, func(a, b owner) int { return strings.Compare(a.key, b.key) })
	out := make([]string, len(keyed))
	for i, o := range keyed {
		out[i] = o.name
	}
	return out
}
