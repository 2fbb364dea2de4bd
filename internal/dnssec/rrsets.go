package dnssec

import (
	"slices"

	"github.com/miekg/dns"
)

// rrset is the records of one name and type with their signatures.
type rrset struct {
	name string
	typ  uint16
	rrs  []dns.RR
	sigs []*dns.RRSIG
}

// rrsets groups rrs by owner and type, in the order first seen, with the
// RRSIGs covering each; signatures covering nothing present are dropped.
func rrsets(rrs []dns.RR) []rrset {
	var out []rrset
	find := func(name string, t uint16) int {
		return slices.IndexFunc(out, func(s rrset) bool { return s.name == name && s.typ == t })
	}
	for _, rr := range rrs {
		if rr.Header().Class != dns.ClassINET || rr.Header().Rrtype == dns.TypeRRSIG || rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		name := dns.CanonicalName(rr.Header().Name)
		if i := find(name, rr.Header().Rrtype); i >= 0 {
			out[i].rrs = append(out[i].rrs, rr)
		} else {
			out = append(out, rrset{name: name, typ: rr.Header().Rrtype, rrs: []dns.RR{rr}})
		}
	}
	for _, rr := range rrs {
		if sig, ok := rr.(*dns.RRSIG); ok {
			if i := find(dns.CanonicalName(sig.Hdr.Name), sig.TypeCovered); i >= 0 {
				out[i].sigs = append(out[i].sigs, sig)
			}
		}
	}
	return out
}

// denialZone is the zone a negative answer about name came from: the
// signer of its authority records, else the owner of its SOA; and the
// NSEC and NSEC3 RRsets it holds.
func denialZone(resp *dns.Msg, name string) (string, []rrset) {
	zone := ""
	var proof []rrset
	for _, s := range rrsets(resp.Ns) {
		switch {
		case s.typ == dns.TypeNSEC || s.typ == dns.TypeNSEC3:
			proof = append(proof, s)
		case s.typ != dns.TypeSOA:
			continue
		}
		if len(s.sigs) > 0 && zone == "" {
			zone = dns.CanonicalName(s.sigs[0].SignerName)
		} else if s.typ == dns.TypeSOA && zone == "" {
			zone = s.name
		}
	}
	if zone != "" && !dns.IsSubDomain(zone, dns.CanonicalName(name)) {
		return "", nil
	}
	return zone, proof
}

// deniesDS says whether proof, verified with keys, shows name to be a
// delegation without a DS record (or one an NSEC3 opt-out span covers).
func (v *Validator) deniesDS(proof []rrset, keys []*dns.DNSKEY, name string) bool {
	name = dns.CanonicalName(name)
	for _, s := range proof {
		if v.verify(s, keys) != nil {
			continue
		}
		for _, rr := range s.rrs {
			switch rr := rr.(type) {
			case *dns.NSEC:
				if dns.CanonicalName(rr.Hdr.Name) == name && delegation(rr.TypeBitMap) {
					return true
				}
			case *dns.NSEC3:
				if rr.Match(name) && delegation(rr.TypeBitMap) {
					return true
				}
				if rr.Flags&1 == 1 && rr.Cover(name) {
					return true // opt-out: unsigned delegations are not listed
				}
			}
		}
	}
	return false
}

// delegation: NS without DS or SOA, a zone cut with no DS.
func delegation(bits []uint16) bool {
	return slices.Contains(bits, dns.TypeNS) && !slices.Contains(bits, dns.TypeDS) && !slices.Contains(bits, dns.TypeSOA)
}
