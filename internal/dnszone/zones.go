package dnszone

import (
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Zones is a built, immutable set of zones. Nothing changes it after Build:
// a server swaps a new one in whole (an atomic pointer) and reads the one it
// holds without locks.
type Zones struct {
	Serial uint32
	zones  map[string]*Zone
}

// Zone is one zone: its SOA, and its records by owner name.
type Zone struct {
	Name  string // canonical, lower-case, with the trailing dot
	SOA   *dns.SOA
	names map[string][]dns.RR
	// owners is every name in order, for transfers: sorted on the first
	// one, since most zones built are never transferred.
	owners     []string
	ownersOnce sync.Once
}

// Find returns the zone that holds qname (the closest enclosing one), or
// nil when none does.
func (zs *Zones) Find(qname string) *Zone {
	if zs == nil {
		return nil
	}
	name := dns.CanonicalName(qname)
	for {
		if z, ok := zs.zones[name]; ok {
			return z
		}
		i, end := dns.NextLabel(name, 0)
		if end {
			return nil
		}
		name = name[i:]
	}
}

// Names lists the zones' names, sorted.
func (zs *Zones) Names() []string {
	var out []string
	for n := range zs.zones {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the records at name and whether the name exists at all
// (a name with no records of the type asked is NODATA, not NXDOMAIN).
func (z *Zone) Lookup(name string) ([]dns.RR, bool) {
	rrs, ok := z.names[dns.CanonicalName(name)]
	return rrs, ok
}

// Transfer is the zone in transfer order: SOA, every record, SOA.
func (z *Zone) Transfer() []dns.RR {
	z.ownersOnce.Do(func() { z.owners = sortedOwners(z.names) })
	out := []dns.RR{z.SOA}
	for _, o := range z.owners {
		for _, rr := range z.names[o] {
			if rr.Header().Rrtype != dns.TypeSOA {
				out = append(out, rr)
			}
		}
	}
	return append(out, z.SOA)
}

// Len is the number of records in the zone.
func (z *Zone) Len() int {
	n := 0
	for _, rrs := range z.names {
		n += len(rrs)
	}
	return n
}

func newZone(name string) *Zone {
	return &Zone{Name: dns.CanonicalName(name), names: map[string][]dns.RR{}}
}

// add puts rr in the zone, and makes every name between it and the apex
// exist (empty non-terminals answer NODATA).
func (z *Zone) add(rr dns.RR) {
	owner := dns.CanonicalName(rr.Header().Name)
	rr.Header().Name = owner
	for _, have := range z.names[owner] {
		if dns.IsDuplicate(have, rr) {
			return
		}
	}
	z.names[owner] = append(z.names[owner], rr)
	for n := owner; n != z.Name; {
		i, end := dns.NextLabel(n, 0)
		if end {
			break
		}
		n = n[i:]
		if _, ok := z.names[n]; !ok {
			z.names[n] = nil
		}
	}
}

func (z *Zone) has(owner string) bool {
	return strings.HasSuffix(dns.CanonicalName(owner), "."+z.Name) || dns.CanonicalName(owner) == z.Name
}
