package dns

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/dnszone"
)

func sampleData() Data {
	return Data{Zones: dnszone.Input{
		Serial:  3,
		Domains: []dnszone.Domain{{Name: "maas", Authoritative: true}},
		Hosts:   []dnszone.Host{{Name: "node1", Domain: "maas", Addrs: []dnszone.HostAddr{{Iface: "eth0", Boot: true, IP: netip.MustParseAddr("192.0.2.10")}}}},
		Resources: []dnszone.Resource{
			{Name: "www", Domain: "maas", Records: []dnszone.Record{{Type: "CNAME", Data: "node1"}}},
			{Name: "out", Domain: "maas", Records: []dnszone.Record{{Type: "CNAME", Data: "elsewhere.example."}}},
			{Name: "big", Domain: "maas", Records: func() []dnszone.Record {
				var rs []dnszone.Record
				for i := range 60 {
					rs = append(rs, dnszone.Record{Type: "TXT", Data: "a long text record to fill a UDP answer " + string(rune('A'+i%26)) + string(rune('a'+i/26))})
				}
				return rs
			}()},
		},
		Subnets: []dnszone.Subnet{{CIDR: netip.MustParsePrefix("192.0.2.0/24"), RDNS: dnszone.RDNSEnabled}},
	}}
}

func serve(t *testing.T, d Data) (*Server, string) {
	t.Helper()
	return serveWith(t, d, Limits{})
}

func ask(t *testing.T, addr, name string, qtype uint16, net string) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	c := &dns.Client{Net: net}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s over %s: %v", name, dns.TypeToString[qtype], net, err)
	}
	return r
}

// TestForwarding: a client on a managed subnet is forwarded to
// upstream_dns; one elsewhere is refused, so the server is never an open
// resolver; with no upstream nobody is forwarded.
func TestForwarding(t *testing.T) {
	up := &dns.Server{Addr: "127.0.0.1:0", Net: "udp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.RecursionAvailable = true
		rr, _ := dns.NewRR(r.Question[0].Name + " 60 IN A 198.51.100.1")
		m.Answer = append(m.Answer, rr)
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	up.NotifyStartedFunc = func() { close(started) }
	go func() { _ = up.ListenAndServe() }()
	<-started
	defer up.Shutdown()
	upstream := up.PacketConn.LocalAddr().String()

	d := sampleData()
	d.Upstream = []string{upstream}
	d.DNSSEC = "no" // the upstream signs nothing
	s, addr := serve(t, d)
	if r := ask(t, addr, "example.org.", dns.TypeA, "udp"); r.Rcode != dns.RcodeRefused {
		t.Fatalf("a client outside the managed subnets: %s; want REFUSED", dns.RcodeToString[r.Rcode])
	}
	d.Zones.Subnets = append(d.Zones.Subnets, dnszone.Subnet{CIDR: netip.MustParsePrefix("127.0.0.0/8")})
	s.Set(d)
	r := ask(t, addr, "example.org.", dns.TypeA, "udp")
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "198.51.100.1" {
		t.Fatalf("forwarded for a managed client: %v", r)
	}
	// A CNAME out of the zones is left to the client to follow.
	if r := ask(t, addr, "out.maas.", dns.TypeA, "udp"); len(r.Answer) != 1 || !r.Authoritative {
		t.Fatalf("CNAME out of the zones: %v", r)
	}
	// Validating, an upstream that cannot show the root's keys gives
	// nothing that can be trusted.
	d.DNSSEC = "auto"
	s.Set(d)
	if r := ask(t, addr, "example.org.", dns.TypeA, "udp"); r.Rcode != dns.RcodeServerFailure {
		t.Fatalf("validating, unsigned upstream: %v; want SERVFAIL", r)
	}
	d.Upstream = nil
	s.Set(d)
	if r := ask(t, addr, "example.org.", dns.TypeA, "udp"); r.Rcode != dns.RcodeRefused {
		t.Fatalf("no upstream: %s; want REFUSED", dns.RcodeToString[r.Rcode])
	}
}

// TestAnswers: CNAMEs inside the zones are followed, a large answer is
// truncated over UDP and whole over TCP, and a transfer needs TCP and a
// trusted address.
func TestAnswers(t *testing.T) {
	d := sampleData()
	s, addr := serve(t, d)
	r := ask(t, addr, "www.maas.", dns.TypeA, "udp")
	if len(r.Answer) != 2 || r.Answer[1].(*dns.A).A.String() != "192.0.2.10" || !r.Authoritative {
		t.Fatalf("www.maas A: %v", r)
	}
	if r := ask(t, addr, "big.maas.", dns.TypeTXT, "udp"); !r.Truncated {
		t.Fatalf("60 TXT records over UDP not truncated (%d answers)", len(r.Answer))
	}
	if r := ask(t, addr, "big.maas.", dns.TypeTXT, "tcp"); r.Truncated || len(r.Answer) != 60 {
		t.Fatalf("60 TXT records over TCP: %d, truncated %v", len(r.Answer), r.Truncated)
	}
	// A forged ANY with a large buffer draws one RRset, and never more
	// than maxUDP bytes.
	any := new(dns.Msg)
	any.SetQuestion("big.maas.", dns.TypeANY)
	any.SetEdns0(65000, false)
	r, err := dns.Exchange(any, addr)
	if err != nil {
		t.Fatal(err)
	}
	r.Compress = true // as it came: compressed
	if wire, _ := r.Pack(); len(wire) > maxUDP || !r.Truncated {
		t.Fatalf("ANY with a 65000-byte buffer: %d bytes (truncated %v); want at most %d", len(wire), r.Truncated, maxUDP)
	}
	any.SetQuestion("maas.", dns.TypeANY)
	if r, err := dns.Exchange(any, addr); err != nil || len(r.Answer) != 1 {
		t.Fatalf("ANY over UDP at the apex (SOA, NS, ...): %d records, %v; want one RRset", len(r.Answer), err)
	}
	if r := ask(t, addr, "node1.maas.", dns.TypeMX, "udp"); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 {
		t.Fatalf("NODATA: %v", r)
	}
	xfr := func() error {
		m := new(dns.Msg)
		m.SetAxfr("maas.")
		ch, err := new(dns.Transfer).In(m, addr)
		if err != nil {
			return err
		}
		for e := range ch {
			if e.Error != nil {
				return e.Error
			}
		}
		return nil
	}
	if err := xfr(); err == nil {
		t.Fatal("a zone transfer to an address not listed")
	}
	if r := ask(t, addr, "maas.", dns.TypeAXFR, "udp"); r.Rcode != dns.RcodeRefused {
		t.Fatalf("AXFR over UDP: %s", dns.RcodeToString[r.Rcode])
	}
	d.Trusted = []string{"127.0.0.1"}
	s.Set(d)
	if err := xfr(); err != nil {
		t.Fatalf("a zone transfer to a listed address: %v", err)
	}
}
