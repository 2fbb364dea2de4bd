package dnszone

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestValidRecord(t *testing.T) {
	for _, tc := range []struct {
		typ, data, err string
	}{
		{"cname", "web.example.com.", ""},
		{"CNAME", "bad name!", "Invalid CNAME"},
		{"MX", "10 mail", ""},
		{"MX", "70000 mail", "Invalid MX"},
		{"MX", "mail", "Invalid MX"},
		{"MX", "10 bad_host!", "Domain name contains invalid characters."},
		{"SRV", "0 5 389 ldap", ""},
		{"SRV", "0 5 389 .", ""},
		{"SRV", "0 5 70000 ldap", "Invalid SRV"},
		{"SSHFP", "1 2 0123abcd", ""},
		{"SSHFP", "1 2", "Invalid SSHFP"},
		{"TXT", "v=spf1 -all", ""},
		{"TXT", "two\nlines", "line breaks"},
		{"NS", "ns1.example.com", ""},
		{"NS", "-bad", "Invalid domain name"},
		{"A", "192.0.2.1", "A is not one of CNAME MX NS SRV SSHFP TXT."},
		{"PTR", "x", "PTR is not one of"},
	} {
		_, err := ValidRecord(tc.typ, tc.data)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidRecord(%q, %q) = %v; want %q", tc.typ, tc.data, err, tc.err)
		}
	}
}

func TestValidNames(t *testing.T) {
	for _, tc := range []struct {
		name, typ string
		ok        bool
	}{
		{"www", "", true}, {"@", "", true}, {"a-b", "", true}, {"-a", "", false}, {"a.b", "", false},
		{"_ldap._tcp", "SRV", true}, {"_ldap._tcp.dc", "SRV", true}, {"_ldap", "SRV", false},
		{strings.Repeat("a", 64), "", false}, {"a_b", "", false}, {"", "", false},
	} {
		if err := ValidResourceName(tc.name, tc.typ); (err == nil) != tc.ok {
			t.Errorf("ValidResourceName(%q, %q) = %v; want ok=%v", tc.name, tc.typ, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		name, err string
	}{
		{"example.com", ""}, {"example.com.", ""}, {"ex ample", "Domain name contains invalid characters."},
		{"-x.com", "Invalid domain name: -x.com."}, {"a..b", "Invalid domain name"}, {strings.Repeat("a.", 128) + "b", "cannot exceed 255"},
	} {
		err := ValidDomainName(tc.name)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidDomainName(%q) = %v; want %q", tc.name, err, tc.err)
		}
	}
	for _, tc := range []struct {
		ttl int
		ok  bool
	}{{0, true}, {30, true}, {MaxTTL, true}, {-1, false}, {MaxTTL + 1, false}} {
		if err := ValidTTL(tc.ttl); (err == nil) != tc.ok {
			t.Errorf("ValidTTL(%d) = %v", tc.ttl, err)
		}
	}
}

func TestCheckAdd(t *testing.T) {
	for _, tc := range []struct {
		ex  Existing
		typ string
		err string
	}{
		{Existing{}, "CNAME", ""},
		{Existing{Addresses: true}, "CNAME", MsgCNAMEOther},
		{Existing{Types: []string{"TXT"}}, "CNAME", MsgCNAMEOther},
		{Existing{Types: []string{"CNAME"}}, "CNAME", MsgMultiCNAME},
		{Existing{Types: []string{"CNAME"}}, "MX", MsgCNAMEOther},
		{Existing{Types: []string{"CNAME"}}, "A", MsgAddressCNAME},
		{Existing{Types: []string{"MX"}}, "TXT", ""},
	} {
		err := CheckAdd(tc.ex, tc.typ)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.err {
				t.Errorf("CheckAdd(%+v, %s) = %q; want %q", tc.ex, tc.typ, got, tc.err)
			}
		} else if tc.err != "" {
			t.Errorf("CheckAdd(%+v, %s) = nil; want %q", tc.ex, tc.typ, tc.err)
		}
	}
}

func ip(s string) netip.Addr       { return netip.MustParseAddr(s) }
func prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func sample() Input {
	return Input{
		Serial: 7, DefaultTTL: 30,
		Domains: []Domain{{Name: "maas", Authoritative: true}, {Name: "example.com", Authoritative: true, TTL: 300}, {Name: "fwd.example", Authoritative: false}},
		Hosts: []Host{
			{Name: "node1", Domain: "maas", Addrs: []HostAddr{{Iface: "eth0", Boot: true, IP: ip("192.0.2.10")}, {Iface: "eth1", IP: ip("2001:db8::10")}}},
			{Name: "node2", Domain: "example.com", TTL: 60, Addrs: []HostAddr{{Iface: "eth0", IP: ip("198.51.100.70")}}},
			{Name: "lost", Domain: "nowhere", Addrs: []HostAddr{{Iface: "eth0", IP: ip("192.0.2.99")}}},
		},
		Resources: []Resource{
			{Name: "www", Domain: "maas", Records: []Record{{Type: "CNAME", Data: "node1"}}},
			{Name: "@", Domain: "maas", Records: []Record{{Type: "MX", Data: "10 node1", TTL: 90}, {Type: "TXT", Data: "v=spf1 -all"}}},
			{Name: "_ldap._tcp", Domain: "maas", Records: []Record{{Type: "SRV", Data: "0 5 389 node1.maas."}}},
			{Name: "vip", Domain: "maas", TTL: 45, IPs: []netip.Addr{ip("192.0.2.20")}},
		},
		Subnets: []Subnet{{CIDR: prefix("192.0.2.0/24"), RDNS: RDNSEnabled}, {CIDR: prefix("198.51.100.64/26"), RDNS: RDNS2317}, {CIDR: prefix("2001:db8::/64"), RDNS: RDNSEnabled}},
		NS:      []NameServer{{Name: "rack1.maas.", IP: ip("192.0.2.2")}},
	}
}

func TestBuild(t *testing.T) {
	zs := Build(sample())
	want := []string{"0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", "100.51.198.in-addr.arpa.", "2.0.192.in-addr.arpa.", "64-26.100.51.198.in-addr.arpa.", "example.com.", "maas."}
	if got := zs.Names(); !slices.Equal(got, want) {
		t.Fatalf("zones = %v; want %v", got, want)
	}
	for _, tc := range []struct {
		name   string
		qtype  uint16
		want   string // the records' text, joined by " | "; "" for NODATA
		exists bool
	}{
		{"node1.maas.", dns.TypeA, "node1.maas.\t30\tIN\tA\t192.0.2.10", true},
		{"NODE1.maas.", dns.TypeA, "node1.maas.\t30\tIN\tA\t192.0.2.10", true},
		{"eth1.node1.maas.", dns.TypeAAAA, "eth1.node1.maas.\t30\tIN\tAAAA\t2001:db8::10", true},
		{"node2.example.com.", dns.TypeA, "node2.example.com.\t60\tIN\tA\t198.51.100.70", true},
		{"www.maas.", dns.TypeCNAME, "www.maas.\t30\tIN\tCNAME\tnode1.maas.", true},
		{"maas.", dns.TypeMX, "maas.\t90\tIN\tMX\t10 node1.maas.", true},
		{"maas.", dns.TypeTXT, "maas.\t30\tIN\tTXT\t\"v=spf1 -all\"", true},
		{"maas.", dns.TypeNS, "maas.\t30\tIN\tNS\track1.maas.", true},
		{"rack1.maas.", dns.TypeA, "rack1.maas.\t30\tIN\tA\t192.0.2.2", true},
		{"_ldap._tcp.maas.", dns.TypeSRV, "_ldap._tcp.maas.\t30\tIN\tSRV\t0 5 389 node1.maas.", true},
		{"_tcp.maas.", dns.TypeSRV, "", true}, // empty non-terminal
		{"vip.maas.", dns.TypeA, "vip.maas.\t45\tIN\tA\t192.0.2.20", true},
		{"10.2.0.192.in-addr.arpa.", dns.TypePTR, "10.2.0.192.in-addr.arpa.\t30\tIN\tPTR\tnode1.maas.", true},
		{"20.2.0.192.in-addr.arpa.", dns.TypePTR, "20.2.0.192.in-addr.arpa.\t45\tIN\tPTR\tvip.maas.", true},
		{"70.100.51.198.in-addr.arpa.", dns.TypeCNAME, "70.100.51.198.in-addr.arpa.\t60\tIN\tCNAME\t70.64-26.100.51.198.in-addr.arpa.", true},
		{"70.64-26.100.51.198.in-addr.arpa.", dns.TypePTR, "70.64-26.100.51.198.in-addr.arpa.\t60\tIN\tPTR\tnode2.example.com.", true},
		{"0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", dns.TypePTR, "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.\t30\tIN\tPTR\teth1.node1.maas.", true},
		{"nothere.maas.", dns.TypeA, "", false},
	} {
		z := zs.Find(tc.name)
		if z == nil {
			t.Errorf("%s: no zone", tc.name)
			continue
		}
		rrs, ok := z.Lookup(tc.name)
		var got []string
		for _, rr := range rrs {
			if rr.Header().Rrtype == tc.qtype {
				got = append(got, rr.String())
			}
		}
		if ok != tc.exists || strings.Join(got, " | ") != tc.want {
			t.Errorf("%s %s = %q, exists %v; want %q, %v", tc.name, dns.TypeToString[tc.qtype], strings.Join(got, " | "), ok, tc.want, tc.exists)
		}
	}
	if zs.Find("fwd.example.") != nil || zs.Find("lost.nowhere.") != nil {
		t.Error("a zone for a domain that is not authoritative or does not exist")
	}
	z := zs.Find("maas.")
	if z.SOA.Serial != 7 || z.SOA.Ns != "rack1.maas." || z.SOA.Minttl != 30 {
		t.Errorf("SOA = %v", z.SOA)
	}
	xfr := z.Transfer()
	if xfr[0] != dns.RR(z.SOA) || xfr[len(xfr)-1] != dns.RR(z.SOA) || len(xfr) != z.Len()+1 {
		t.Errorf("transfer of %d records, zone of %d", len(xfr), z.Len())
	}
	if zs.Find("example.com.").SOA.Hdr.Ttl != 300 {
		t.Error("the domain's TTL is not the SOA's")
	}
}

func TestReverseZones(t *testing.T) {
	for _, tc := range []struct {
		cidr string
		want []string
	}{
		{"192.0.2.0/24", []string{"2.0.192.in-addr.arpa."}},
		{"192.0.2.128/25", []string{"2.0.192.in-addr.arpa."}},
		{"10.0.0.0/8", []string{"10.in-addr.arpa."}},
		{"198.18.0.0/15", []string{"18.198.in-addr.arpa.", "19.198.in-addr.arpa."}},
		{"192.0.0.0/22", []string{"0.0.192.in-addr.arpa.", "1.0.192.in-addr.arpa.", "2.0.192.in-addr.arpa.", "3.0.192.in-addr.arpa."}},
		{"2001:db8::/32", []string{"8.b.d.0.1.0.0.2.ip6.arpa."}},
		{"2001:db8::/63", []string{"0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.", "1.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."}},
	} {
		if got := reverseZones(prefix(tc.cidr)); !slices.Equal(got, tc.want) {
			t.Errorf("reverseZones(%s) = %v; want %v", tc.cidr, got, tc.want)
		}
	}
}

// TestSerialInSOA: a build carries the serial it is given, so a change the
// region numbers is visible to secondaries.
func TestSerialInSOA(t *testing.T) {
	in := sample()
	a := Build(in)
	in.Serial++
	in.Hosts[0].Name = "renamed"
	b := Build(in)
	if b.Find("maas.").SOA.Serial <= a.Find("maas.").SOA.Serial {
		t.Error("serial did not grow")
	}
	if rrs, _ := a.Find("maas.").Lookup("node1.maas."); len(rrs) == 0 {
		t.Error("the old snapshot changed after a new build")
	}
}

func TestSearchList(t *testing.T) {
	cases := []struct {
		first string
		auth  []string
		want  []string
	}{
		{"maas", nil, []string{"maas"}},
		{"lab.example", []string{"zeta", "maas", "lab.example", "alpha"}, []string{"lab.example", "alpha", "maas", "zeta"}},
		{"", []string{"b", "a"}, []string{"a", "b"}},
		{"maas.", []string{"maas", ""}, []string{"maas"}},
	}
	for _, c := range cases {
		if got := SearchList(c.first, c.auth); !slices.Equal(got, c.want) {
			t.Errorf("SearchList(%q, %v) = %v, want %v", c.first, c.auth, got, c.want)
		}
	}
}
