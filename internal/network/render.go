package network

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// RenderOptions are what the deployed machine's network-config takes from
// outside the model: the DNS search domains, and the racks' DNS addresses
// (DNSServers), offered on subnets that allow DNS before the subnets' own
// (see rackDNS).
type RenderOptions struct {
	SearchDomains []string
	DNSServers    []netip.Addr
}

var domainName = regexp.MustCompile(`^([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$`)

// Render is the deployed machine's cloud-init network-config, version 2
// (netplan's syntax, under a top-level "network" key, which both cloud-init
// and netplan read): every enabled physical NIC matched by its MAC and
// given its name, bonds, bridges and VLANs with their parameters,
// addresses, the default gateways, static routes, nameservers and MTU.
// It refuses, with field errors, a model that cannot work: one that fails
// Validate, a subnet or route it reads that fails its rule, or an AUTO or
// STATIC link with no address allocated yet.
// Interfaces are sorted by name; an interface's addresses follow its links.
func Render(n *Network, m *Machine, opt RenderOptions) ([]byte, error) {
	e := Validate(n, m, nil)
	seen := map[int]bool{}
	for _, i := range m.Interfaces {
		for k, l := range i.Links {
			if (l.Mode == LinkAuto || l.Mode == LinkStatic) && !l.IP.IsValid() && l.SubnetID != 0 {
				e.Add(fmt.Sprintf("%s.links.%d.ip_address", i.Name, k), "The %s link has no address yet; allocate it before rendering.", modeName(l.Mode))
			}
			// The subnets the render reads must hold together too (a
			// gateway of the other family would misplace gateway4).
			if s, ok := n.Subnet(l.SubnetID); ok && !seen[s.ID] {
				seen[s.ID] = true
				e.Merge(fmt.Sprintf("subnets.%d", s.ID), ValidateSubnet(n, s))
			}
		}
	}
	for _, r := range routesOf(n, m) {
		e.Merge(fmt.Sprintf("routes.%d", r.ID), ValidateRoute(n, r))
	}
	for _, d := range opt.SearchDomains {
		if !domainName.MatchString(d) || len(d) > 253 {
			e.Add("search", "%q is not a domain name.", d)
		}
	}
	if err := e.Err(); err != nil {
		return nil, err
	}
	r := renderer{n: n, m: m, opt: opt, gw: DefaultGateways(n, m), routes: routesOf(n, m)}
	sections := map[InterfaceType]ymap{}
	ifaces := slices.Clone(m.Interfaces)
	slices.SortFunc(ifaces, func(a, b Interface) int { return strings.Compare(a.Name, b.Name) })
	for _, i := range ifaces {
		if i.Enabled {
			s := sections[i.Type]
			s.set(i.Name, r.iface(i))
			sections[i.Type] = s
		}
	}
	doc := ymap{{"version", 2}}
	for _, s := range []struct {
		t   InterfaceType
		key string
	}{{Physical, "ethernets"}, {Bond, "bonds"}, {Bridge, "bridges"}, {VLANIf, "vlans"}} {
		if len(sections[s.t]) > 0 {
			doc.set(s.key, sections[s.t])
		}
	}
	var b strings.Builder
	writeYAML(&b, ymap{{"network", doc}}, 0)
	return []byte(b.String()), nil
}

type renderer struct {
	n      *Network
	m      *Machine
	opt    RenderOptions
	gw     Gateways
	routes []StaticRoute
}

func (r *renderer) iface(i Interface) ymap {
	var c ymap
	switch i.Type {
	case Physical:
		c.set("match", ymap{{"macaddress", mac(i.MAC)}})
		c.set("set-name", i.Name)
	case Bond:
		c.set("interfaces", r.parentNames(i))
		c.set("macaddress", r.childMAC(i))
		c.set("parameters", bondParameters(i.Bond))
	case Bridge:
		c.set("interfaces", r.parentNames(i))
		c.set("macaddress", r.childMAC(i))
		c.set("parameters", ymap{{"forward-delay", i.Bridge.FD()}, {"stp", i.Bridge.STP}})
		if i.Bridge.Type == BridgeOVS {
			c.set("openvswitch", ymap{})
		}
	case VLANIf:
		v, _ := r.n.VLAN(i.VLANID)
		c.set("id", v.VID)
		p, _ := r.m.Interface(i.Parents[0])
		c.set("link", p.Name)
	}
	c.set("mtu", EffectiveMTU(r.n, i))
	r.addresses(&c, i)
	return c
}

// addresses adds the interface's addresses, DHCP, gateways, routes and
// nameservers. LINK_UP, and no link at all, leave the interface up with
// no address.
func (r *renderer) addresses(c *ymap, i Interface) {
	var addrs, dns ylist
	var dhcp4, dhcp6, allowDNS bool
	var routes ylist
	for _, l := range i.Links {
		s, ok := r.n.Subnet(l.SubnetID)
		switch l.Mode {
		case LinkDHCP:
			// DHCP on no known subnet asks both families, as MAAS does.
			dhcp4 = dhcp4 || !ok || s.CIDR.Addr().Is4()
			dhcp6 = dhcp6 || !ok || s.CIDR.Addr().Is6()
			continue
		case LinkAuto, LinkStatic:
		default:
			continue
		}
		addrs = append(addrs, netip.PrefixFrom(l.IP, s.CIDR.Bits()).String())
		if s.AllowDNS {
			allowDNS = true
			for _, d := range r.rackDNS(s) {
				dns = appendNew(dns, d.String())
			}
		}
		for _, d := range s.DNSServers {
			dns = appendNew(dns, d.String())
		}
		for _, rt := range r.routes {
			if rt.SourceID == s.ID {
				route := ymap{{"to", rt.Destination.String()}, {"via", rt.Gateway.String()}}
				if rt.Metric != 0 {
					route.set("metric", rt.Metric)
				}
				routes = append(routes, route)
			}
		}
	}
	if len(addrs) > 0 {
		c.set("addresses", addrs)
	}
	if dhcp4 {
		c.set("dhcp4", true)
	}
	if dhcp6 {
		c.set("dhcp6", true)
	}
	// gateway4/gateway6 rather than a "to: default" route: Debian 12's
	// cloud-init (22.4) reads these onto the subnet of their family, while
	// it hangs every route on the interface's first subnet and cannot parse
	// "default". netplan 0.106 takes both (and warns of gateway4's age).
	if g := r.gw.IPv4; g.InterfaceID == i.ID && g.Router.IsValid() {
		c.set("gateway4", g.Router.String())
	}
	if g := r.gw.IPv6; g.InterfaceID == i.ID && g.Router.IsValid() {
		c.set("gateway6", g.Router.String())
	}
	if len(routes) > 0 {
		c.set("routes", routes)
	}
	if len(dns) > 0 {
		ns := ymap{{"addresses", dns}}
		if allowDNS && len(r.opt.SearchDomains) > 0 {
			var search ylist
			for _, d := range r.opt.SearchDomains {
				search = appendNew(search, d)
			}
			ns.set("search", search)
		}
		c.set("nameservers", ns)
	}
}

// rackDNS are the racks' DNS addresses a machine on s can use, as MAAS
// picks them: of s's family, on s's VLAN, and inside s itself when s has
// no gateway to reach the rest of the VLAN by.
func (r *renderer) rackDNS(s Subnet) []netip.Addr {
	var out []netip.Addr
	for _, d := range r.opt.DNSServers {
		if d.Is4() != s.CIDR.Addr().Is4() {
			continue
		}
		ok := s.CIDR.Contains(d)
		for _, o := range r.n.Subnets {
			ok = ok || s.Gateway.IsValid() && o.VLANID == s.VLANID && o.CIDR.Contains(d)
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

func appendNew(l ylist, s string) ylist {
	if slices.Contains(l, any(s)) {
		return l
	}
	return append(l, s)
}

func (r *renderer) parentNames(i Interface) ylist {
	var names []string
	for _, id := range i.Parents {
		p, _ := r.m.Interface(id)
		names = append(names, p.Name)
	}
	slices.Sort(names)
	out := make(ylist, len(names))
	for k, s := range names {
		out[k] = s
	}
	return out
}

// childMAC is a bond's or bridge's MAC: its own, else its first parent's
// (by name), as MAAS gives it.
func (r *renderer) childMAC(i Interface) string {
	if i.MAC != "" {
		return mac(i.MAC)
	}
	first := r.parentNames(i)[0].(string)
	for _, id := range i.Parents {
		if p, _ := r.m.Interface(id); p.Name == first {
			if p.MAC == "" {
				return r.childMAC(p)
			}
			return mac(p.MAC)
		}
	}
	return ""
}

func mac(s string) string {
	hw, err := net.ParseMAC(s)
	if err != nil {
		return s
	}
	return hw.String()
}

// bondParameters maps MAAS's bond parameters to netplan's names (MAAS's
// own mapping: bond_miimon is mii-monitor-interval, bond_xmit_hash_policy
// transmit-hash-policy, ...). lacp-rate goes only on 802.3ad bonds and the
// hash policy only where the driver uses one: netplan refuses them
// elsewhere.
func bondParameters(p BondParams) ymap {
	p = p.Defaults()
	out := ymap{{"mode", string(p.Mode)}, {"mii-monitor-interval", p.MIIMon}, {"up-delay", p.UpDelay}, {"down-delay", p.DownDelay}}
	if p.Mode == "802.3ad" {
		out.set("lacp-rate", p.LACPRate)
	}
	if p.Mode == "802.3ad" || p.Mode == "balance-xor" || p.Mode == "balance-tlb" {
		out.set("transmit-hash-policy", p.XmitHashPolicy)
	}
	return out
}
