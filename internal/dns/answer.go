package dns

import (
	"net/netip"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dnszone"
)

// maxChase bounds how many CNAMEs inside Anvil's zones an answer follows.
const maxChase = 8

func (s *Server) answer(st *state, r *dns.Msg, client netip.Addr) *dns.Msg {
	m := new(dns.Msg)
	if r == nil {
		return m
	}
	q, ok := single(r)
	switch {
	case r.Response:
		m.SetRcode(r, dns.RcodeFormatError)
		return m
	case r.Opcode != dns.OpcodeQuery:
		m.SetRcode(r, dns.RcodeNotImplemented)
		return m
	case !ok:
		m.SetRcode(r, dns.RcodeFormatError)
		return m
	case q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY:
		m.SetRcode(r, dns.RcodeRefused)
		return m
	case q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR:
		m.SetRcode(r, dns.RcodeRefused) // only over TCP, by transfer
		return m
	}
	recurse := len(st.upstream) > 0 && (within(st.managed, client) || within(st.trusted, client))
	z := st.zones.Find(q.Name)
	if z == nil {
		if recurse && r.RecursionDesired {
			if fm := s.forward(st, r, client); fm != nil {
				return fm
			}
			m.SetRcode(r, dns.RcodeServerFailure)
			m.RecursionAvailable = true
			return m
		}
		// Not ours and not theirs to ask: never an open resolver.
		m.SetRcode(r, dns.RcodeRefused)
		return m
	}
	m.SetReply(r)
	m.Authoritative = true
	m.RecursionAvailable = recurse
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(maxUDP, false)
	}
	name := q.Name
	for i := 0; ; i++ {
		rrs, exists := z.Lookup(name)
		if !exists {
			if i == 0 {
				m.Rcode = dns.RcodeNameError
			}
			m.Ns = []dns.RR{negative(z)}
			return m
		}
		var cname dns.RR
		found := false
		for _, rr := range rrs {
			t := rr.Header().Rrtype
			if t == q.Qtype || q.Qtype == dns.TypeANY {
				m.Answer = append(m.Answer, rr)
				found = true
			} else if t == dns.TypeCNAME {
				cname = rr
			}
		}
		if found {
			return m
		}
		if cname == nil {
			m.Ns = []dns.RR{negative(z)}
			return m
		}
		m.Answer = append(m.Answer, cname)
		target := cname.(*dns.CNAME).Target
		next := st.zones.Find(target)
		if next == nil || i == maxChase {
			return m // the client resolves the rest
		}
		z, name = next, target
	}
}

// negative is the SOA sent with NXDOMAIN and NODATA: its TTL is the
// negative-caching time (RFC 2308).
func negative(z *dnszone.Zone) dns.RR {
	soa := *z.SOA
	soa.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
	return &soa
}
