// Package powerroute decides which racks may run a power command. A rack
// reaches the BMCs whose addresses lie in the networks it declares (its
// --bmc-network flags and the subnets of its interfaces); a request goes
// only to a live rack that reaches its BMC, and one that none reaches is
// refused when it is asked for. Everything here is pure: the region and
// the racks do the I/O.
package powerroute

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// MaxNetworks bounds what one rack may declare, so that a claim stays a
// small request and the region's check a short loop.
const MaxNetworks = 64

// Rack is a rack as the region knows it for routing.
type Rack struct {
	ID       string
	Networks []netip.Prefix
	Seen     time.Time
}

// Host is the host part of a BMC key ("ipmi://192.0.2.3:623",
// "redfish://https://[2001:db8::3]:8443", "webhook://http://bmc.example"):
// the name or address a driver dials. It is "" for a machine without a BMC
// on the network (manual power).
func Host(bmcKey string) string {
	_, rest, ok := strings.Cut(bmcKey, "://")
	if !ok {
		return ""
	}
	if _, after, ok := strings.Cut(rest, "://"); ok { // a URL endpoint
		rest = after
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 { // user info
		rest = rest[at+1:]
	}
	if h, _, err := net.SplitHostPort(rest); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
}

// Reaches says whether a rack declaring nets may run commands for the BMC
// with key bmcKey. A BMC named by an address is reached when the address
// lies in one of the networks. A BMC named by a host name can only be
// placed by resolving it, which the region does not do for every request:
// it is reached by a rack that declares a whole address family (0.0.0.0/0
// or ::/0), as the rack of `anvil serve` does by default. A machine with
// no BMC (manual power) needs no network and is reached by every rack.
func Reaches(nets []netip.Prefix, bmcKey string) bool {
	host := Host(bmcKey)
	if host == "" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		for _, p := range nets {
			if p.Bits() == 0 {
				return true
			}
		}
		return false
	}
	addr = addr.Unmap().WithZone("") // fe80::1%br0 lies in fe80::/64
	for _, p := range nets {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// ReachesAll says whether nets hold a whole address family of each kind
// (0.0.0.0/0 and ::/0): such a rack reaches every BMC, and its claims need
// no filter.
func ReachesAll(nets []netip.Prefix) bool {
	var v4, v6 bool
	for _, p := range nets {
		if p.Bits() == 0 {
			v4, v6 = v4 || p.Addr().Is4(), v6 || p.Addr().Is6()
		}
	}
	return v4 && v6
}

// Claimable says whether a rack may claim a request for the BMC: it
// reaches the BMC's network and has not found the BMC's host unreachable
// (unreachable holds the hosts its probe failed on lately).
func Claimable(nets []netip.Prefix, unreachable map[string]bool, bmcKey string) bool {
	return Reaches(nets, bmcKey) && !unreachable[Host(bmcKey)]
}

// Live keeps the racks seen within ttl before now.
func Live(racks []Rack, now time.Time, ttl time.Duration) []Rack {
	var out []Rack
	for _, r := range racks {
		if !r.Seen.Before(now.Add(-ttl)) {
			out = append(out, r)
		}
	}
	return out
}

// Serving lists the ids of the racks that reach the BMC.
func Serving(racks []Rack, bmcKey string) []string {
	var out []string
	for _, r := range racks {
		if Reaches(r.Networks, bmcKey) {
			out = append(out, r.ID)
		}
	}
	return out
}

// NoRackError is a request for a BMC that no live rack reaches.
type NoRackError struct{ Host string }

func (e *NoRackError) Error() string {
	if e.Host == "" {
		return "no rack is running power commands"
	}
	return "no rack reaches BMC " + e.Host
}

// Route returns nil when some live rack reaches the BMC, else a
// *NoRackError naming it.
func Route(racks []Rack, bmcKey string) error {
	if len(Serving(racks, bmcKey)) > 0 {
		return nil
	}
	return &NoRackError{Host: Host(bmcKey)}
}

// Narrow keeps of the networks a rack declares the parts that lie in the
// networks it is allowed (what an administrator granted it and the
// subnets it serves): the intersection, as prefixes. Beyond lists the
// declared networks not wholly allowed, for the rack to be told. A rack
// declaring 0.0.0.0/0 with 192.0.2.0/24 allowed reaches 192.0.2.0/24.
func Narrow(declared, allowed []netip.Prefix) (kept, beyond []netip.Prefix) {
	seen := map[netip.Prefix]bool{}
	for _, d := range declared {
		whole := false
		for _, a := range allowed {
			if !d.Overlaps(a) {
				continue
			}
			in := d
			if a.Bits() > d.Bits() {
				in = a
			} else {
				whole = true
			}
			if !seen[in] {
				seen[in] = true
				kept = append(kept, in)
			}
		}
		if !whole {
			beyond = append(beyond, d)
		}
	}
	return kept, beyond
}

// ParseNetworks reads declared networks (CIDRs) into canonical prefixes,
// without duplicates. An address without a length is a network of one.
func ParseNetworks(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("BMC network %q is not a CIDR such as 192.0.2.0/24", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		p = p.Masked()
		if seen[p] {
			continue
		}
		if len(out) == MaxNetworks {
			return nil, fmt.Errorf("at most %d BMC networks", MaxNetworks)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// Strings renders prefixes for the wire and the store.
func Strings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
