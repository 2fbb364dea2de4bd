package dns

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// FuzzQuery throws arbitrary packets at the query path: nothing panics,
// every answer packs, and nothing outside the zones is answered for a
// client the server does not serve.
func FuzzQuery(f *testing.F) {
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"node1.maas.", dns.TypeA}, {"www.maas.", dns.TypeANY}, {"10.2.0.192.in-addr.arpa.", dns.TypePTR}, {"example.org.", dns.TypeA}, {"maas.", dns.TypeAXFR}} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		m.SetEdns0(4096, true)
		b, _ := m.Pack()
		f.Add(b)
	}
	s := New(nil)
	d := sampleData()
	d.Upstream = []string{"127.0.0.1:9"} // never reached: the client is not served
	s.Set(d)
	outside := netip.MustParseAddr("198.51.100.7")
	f.Fuzz(func(t *testing.T, b []byte) {
		r := new(dns.Msg)
		if err := r.Unpack(b); err != nil {
			return
		}
		m := s.Answer(r, outside)
		if _, err := m.Pack(); err != nil {
			t.Fatalf("answer does not pack: %v\n%v", err, m)
		}
		if len(m.Answer) > 0 && !m.Authoritative {
			t.Fatalf("a non-authoritative answer to a client not served: %v", m)
		}
	})
}
