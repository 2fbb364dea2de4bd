package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/dns"
	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// dnsFeed follows what the racks' DNS is made of, for one boot stream:
// the machines as the stream lists them, and the rest read when asked.
type dnsFeed struct {
	hosts map[string]feedHost
	sent  string // the hash of the content last sent
	// built are the hosts last derived, at builtAt; a machine's change
	// that DNS shows (dirty) derives them again at once, else at most
	// once a second, since that reads every machine's sighting.
	built   []dnszone.Host
	builtAt time.Time
	dirty   bool
}

type feedHost struct {
	name, domain string
	status       machine.Status
	ifaces       []machine.Interface
}

func newDNSFeed() *dnsFeed { return &dnsFeed{hosts: map[string]feedHost{}} }

func (f *dnsFeed) note(m *machine.Machine) {
	h := feedHost{name: m.Hostname, domain: m.Domain, status: m.Status, ifaces: m.Interfaces}
	old, ok := f.hosts[m.SystemID]
	if !ok || old.name != h.name || old.domain != h.domain || publishes(old.status) != publishes(h.status) || !slices.Equal(old.ifaces, h.ifaces) {
		f.dirty = true
	}
	f.hosts[m.SystemID] = h
}

func (f *dnsFeed) forget(id string) {
	delete(f.hosts, id)
	f.dirty = true
}

// publishes says whether a machine in status st holds the address it was
// last seen with: while it runs Anvil's environment or its deployed OS.
// A release takes the name's address away at once, as MAAS's does.
func publishes(st machine.Status) bool { return slices.Contains(publishing, st) }

var publishing = []machine.Status{machine.Deployed, machine.Deploying, machine.Commissioning, machine.Testing, machine.RescueMode,
	machine.EnteringRescueMode, machine.ExitingRescueMode, machine.DiskErasing}

// dnsData builds what the racks serve. The machines' addresses are
// IPAM's (STATIC and allocated AUTO links) and, for DHCP, the ones the
// racks last saw their interfaces with (sightings); see hostsOf.
func (s *Server) dnsData(ctx context.Context, f *dnsFeed) (dns.Data, error) {
	var d dns.Data
	st, err := s.loadDNS(ctx)
	if err != nil {
		return d, err
	}
	in := dnszone.Input{DefaultTTL: s.svc.SettingInt(ctx, "default_dns_ttl")}
	byID := map[int64]string{}
	for _, dom := range st.domains {
		byID[dom.ID] = dom.Name
		in.Domains = append(in.Domains, dnszone.Domain{Name: dom.Name, Authoritative: dom.Authoritative, TTL: derefTTL(dom.TTL)})
	}
	for _, r := range st.resources {
		res := dnszone.Resource{Name: r.Name, Domain: byID[r.DomainID], TTL: derefTTL(r.AddressTTL)}
		for _, ip := range r.IPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				res.IPs = append(res.IPs, a)
			}
		}
		for _, x := range st.data {
			if x.ResourceID == r.ID {
				res.Records = append(res.Records, dnszone.Record{Type: x.Type, Data: x.Data, TTL: derefTTL(x.TTL)})
			}
		}
		in.Resources = append(in.Resources, res)
	}
	if f.dirty || time.Since(f.builtAt) >= time.Second {
		if f.built, err = s.hostsOf(ctx, f); err != nil {
			return d, err
		}
		f.builtAt, f.dirty = time.Now(), false
	}
	in.Hosts = f.built
	sns, err := s.store.ListSubnets(ctx)
	if err != nil {
		return d, err
	}
	for _, sn := range sns {
		if p, err := netip.ParsePrefix(sn.CIDR); err == nil {
			in.Subnets = append(in.Subnets, dnszone.Subnet{CIDR: p, RDNS: dnszone.RDNS(sn.RDNSMode)})
		}
	}
	racks, err := s.store.ListRacks(ctx)
	if err != nil {
		return d, err
	}
	def := st.defaultDomain().Name
	// A name server is a rack that answers DNS, at the address it
	// answers at (a rack that runs only power, or has DNS off, is none).
	for _, rk := range racks {
		label, _, _ := strings.Cut(rk.Hostname, ".")
		dns := rk.DNSAddresses() // only those in subnets it serves
		if len(dns) == 0 || dnszone.ValidResourceName(label, "") != nil {
			continue
		}
		in.NS = append(in.NS, dnszone.NameServer{Name: label + "." + def + ".", IP: dns[0]})
	}
	d.Zones = in
	d.Upstream = strings.Fields(s.svc.SettingString(ctx, "upstream_dns"))
	d.DNSSEC = s.svc.SettingString(ctx, "dnssec_validation")
	d.Trusted = strings.Fields(strings.ReplaceAll(s.svc.SettingString(ctx, "dns_trusted_acl"), ",", " "))
	return d, nil
}

// hostsOf is where machines' addresses enter DNS: each interface's
// assigned addresses from IPAM, and the sighted address of a physical
// interface that has none (a DHCP link: the rack saw what it was given),
// chosen among as MAAS does (dnszone.HostAddrs). Devices follow, with
// their IPAM addresses.
func (s *Server) hostsOf(ctx context.Context, f *dnsFeed) ([]dnszone.Host, error) {
	sightings, err := s.store.MachineSightings(ctx, nil)
	if err != nil {
		return nil, err
	}
	ipOf := make(map[string]netip.Addr, len(sightings))
	for _, sg := range sightings {
		if a, err := netip.ParseAddr(sg.IP); err == nil {
			ipOf[sg.MAC] = a
		}
	}
	assigned, err := s.store.ListIPAddresses(ctx, store.IPAddressFilter{})
	if err != nil {
		return nil, err
	}
	ipam := map[string][]store.IPAddress{}
	for _, a := range assigned {
		if _, err := netip.ParseAddr(a.IP); err == nil && a.Node.SystemID != "" && a.InterfaceID != 0 {
			ipam[a.Node.SystemID] = append(ipam[a.Node.SystemID], a)
		}
	}
	ids := make([]string, 0, len(f.hosts))
	for id := range f.hosts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []dnszone.Host
	for _, id := range ids {
		h := f.hosts[id]
		if !publishes(h.status) {
			continue
		}
		ifaces, err := s.dnsIfaces(ctx, id, h.ifaces, ipam[id])
		if err != nil {
			return nil, err
		}
		var cands []dnszone.Candidate
		held := map[int64]bool{}
		for _, a := range ipam[id] {
			held[a.InterfaceID] = true
			cands = append(cands, dnszone.Candidate{Iface: a.InterfaceID, Kind: addrKind(a.AllocType), IP: netip.MustParseAddr(a.IP)})
		}
		for _, ifc := range h.ifaces {
			if a, ok := ipOf[ifc.MAC]; ok && !held[ifc.ID] {
				cands = append(cands, dnszone.Candidate{Iface: ifc.ID, Kind: dnszone.Discovered, IP: a})
			}
		}
		dh := dnszone.Host{Name: h.name, Domain: cmp.Or(h.domain, dnszone.DefaultDomain), Addrs: dnszone.HostAddrs(ifaces, cands)}
		if len(dh.Addrs) > 0 {
			out = append(out, dh)
		}
	}
	devs, err := s.deviceHosts(ctx, ipam)
	if err != nil {
		return nil, err
	}
	return append(out, devs...), nil
}

// dnsIfaces are a machine's interfaces for choosing its DNS addresses:
// the physical ones the boot stream lists, or all of them, read, when an
// address sits on another (a bond, bridge or VLAN).
func (s *Server) dnsIfaces(ctx context.Context, id string, phys []machine.Interface, addrs []store.IPAddress) ([]dnszone.Iface, error) {
	var out []dnszone.Iface
	for _, i := range phys {
		out = append(out, dnszone.Iface{ID: i.ID, Name: i.Name, Type: "physical", Boot: i.Boot})
	}
	if !slices.ContainsFunc(addrs, func(a store.IPAddress) bool {
		return !slices.ContainsFunc(phys, func(i machine.Interface) bool { return i.ID == a.InterfaceID })
	}) {
		return out, nil
	}
	all, err := s.store.ListInterfaces(ctx, id)
	if err != nil {
		return nil, err
	}
	out = out[:0]
	for _, i := range all {
		out = append(out, dnszone.Iface{ID: i.ID, Name: i.Name, Type: i.Type, Parents: i.Parents, Boot: i.Boot})
	}
	return out, nil
}

// addrKind is an allocation type as dnszone ranks it.
func addrKind(allocType int) int {
	switch allocType {
	case store.AllocSticky:
		return dnszone.Sticky
	case store.AllocUserReserved:
		return dnszone.UserReserved
	case store.AllocAuto:
		return dnszone.Auto
	case store.AllocDHCP:
		return dnszone.DHCP
	}
	return dnszone.Discovered
}

func derefTTL(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// changed says whether d differs from what was last sent, and numbers it:
// the serial is the store's, shared by every region and stream, and grows
// only when the content does.
func (s *Server) changed(ctx context.Context, f *dnsFeed, d *dns.Data) (bool, error) {
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if hash == f.sent {
		return false, nil
	}
	serial, err := s.store.DNSSerial(ctx, hash)
	if err != nil {
		return false, err
	}
	d.Zones.Serial = serial
	f.sent = hash
	return true, nil
}
