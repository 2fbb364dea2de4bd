package api_test

import (
	"context"
	"encoding/json"
	"github.com/anvilmetal/anvil/internal/store"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

func withDNS(c *serve.Config) { c.DNSAddr = "127.0.0.1:0" }

// dig runs Debian's dig against addr and returns its answer lines (name,
// TTL, class, type, data, tab-joined as dig prints them) and the status.
func dig(t *testing.T, addr string, args ...string) (status string, lines []string) {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command("dig", append([]string{"@" + host, "-p", port, "+time=2", "+tries=1", "+nocmd", "+noquestion", "+nostats"}, args...)...).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "status:") && !strings.Contains(string(out), "Transfer failed") {
		t.Fatalf("dig %v: %v\n%s", args, err, out)
	}
	if m := regexp.MustCompile(`status: ([A-Z]+)`).FindStringSubmatch(string(out)); m != nil {
		status = m[1]
	}
	if strings.Contains(string(out), "Transfer failed") {
		status = "TRANSFER FAILED"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, ";") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	return status, lines
}

func needDig(t *testing.T) {
	if _, err := exec.LookPath("dig"); err != nil {
		t.Skip("dig (Debian bind9-dnsutils) is not installed")
	}
}

func serialOf(t *testing.T, addr string) uint32 {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("maas.", dns.TypeSOA)
	r, err := dns.Exchange(m, addr)
	if err != nil || len(r.Answer) != 1 {
		t.Fatalf("SOA of maas.: %v %v", r, err)
	}
	return r.Answer[0].(*dns.SOA).Serial
}

// within polls cond for up to a second: the stream pushes DNS changes
// in a quarter of a second.
func within(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDNSWithDig proves the racks' DNS with the real dig: every record type
// with its TTL, NXDOMAIN with the SOA, zone transfers refused until an
// admin lists the address, recursion refused to a client outside the
// managed subnets, a rename and a release seen within a second with a new
// serial, and a rack that keeps answering with its region gone.
func TestDNSWithDig(t *testing.T) {
	needDig(t)
	eachDB(t, func(t *testing.T, e *env) {
		if e.srv.Rack == nil || e.srv.Rack.DNS == nil {
			t.Fatal("the rack in the server serves no DNS")
		}
		ns := e.srv.Rack.DNS.String()
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, nil)
		m := e.addMachine("node1", "52:54:00:00:d0:01", nil)
		e.deployed(m.SystemID)
		evs, _ := json.Marshal([]map[string]any{{"mac": "52:54:00:00:d0:01", "ip": "192.0.2.10", "kind": "dhcp", "detail": "ack", "at": time.Now()}})
		e.must(200, "POST", "rack/", e.admin, url.Values{"op": {"boot_events"}, "events": {string(evs)}}, nil)
		for _, f := range []url.Values{
			{"fqdn": {"www.maas"}, "rrtype": {"CNAME"}, "rrdata": {"node1"}, "ttl": {"120"}},
			{"name": {"@"}, "domain": {"maas"}, "rrtype": {"MX"}, "rrdata": {"10 node1"}, "ttl": {"300"}},
			{"name": {"@"}, "domain": {"maas"}, "rrtype": {"TXT"}, "rrdata": {"v=spf1 -all"}},
			{"name": {"_ldap._tcp"}, "domain": {"maas"}, "rrtype": {"SRV"}, "rrdata": {"0 5 389 node1.maas."}, "ttl": {"60"}},
		} {
			e.must(200, "POST", "dnsresourcerecords/", e.admin, f, nil)
		}
		e.must(200, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"vip.maas"}, "ip_addresses": {"192.0.2.20 2001:db8::20"}, "address_ttl": {"45"}}, nil)

		// Records come with the change; a machine's sighted address with
		// the next rebuild of the machines' part, at most a poll later.
		within(t, "vip.maas and node1.maas resolve", 5*time.Second, func() bool {
			_, l := dig(t, ns, "vip.maas", "AAAA")
			_, n := dig(t, ns, "node1.maas", "A")
			return slices.Contains(l, "vip.maas. 45 IN AAAA 2001:db8::20") && slices.Contains(n, "node1.maas. 30 IN A 192.0.2.10")
		})
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"node1.maas", "A"}, "node1.maas. 30 IN A 192.0.2.10"},
			{[]string{"vip.maas", "A"}, "vip.maas. 45 IN A 192.0.2.20"},
			{[]string{"vip.maas", "AAAA"}, "vip.maas. 45 IN AAAA 2001:db8::20"},
			{[]string{"-x", "192.0.2.10"}, "10.2.0.192.in-addr.arpa. 30 IN PTR node1.maas."},
			{[]string{"-x", "192.0.2.20"}, "20.2.0.192.in-addr.arpa. 45 IN PTR vip.maas."},
			{[]string{"www.maas", "A"}, "www.maas. 120 IN CNAME node1.maas."},
			{[]string{"www.maas", "A"}, "node1.maas. 30 IN A 192.0.2.10"},
			{[]string{"maas", "MX"}, "maas. 300 IN MX 10 node1.maas."},
			{[]string{"maas", "TXT"}, `maas. 30 IN TXT "v=spf1 -all"`},
			{[]string{"_ldap._tcp.maas", "SRV"}, "_ldap._tcp.maas. 60 IN SRV 0 5 389 node1.maas."},
		} {
			status, lines := dig(t, ns, append(c.args, "+norec")...)
			if status != "NOERROR" || !slices.Contains(lines, c.want) {
				t.Errorf("dig %v: %s %q; want NOERROR with %q", c.args, status, lines, c.want)
			}
		}
		status, lines := dig(t, ns, "nothere.maas", "A")
		if status != "NXDOMAIN" || len(lines) != 1 || !strings.Contains(lines[0], "IN SOA") {
			t.Errorf("dig nothere.maas: %s %q; want NXDOMAIN with the SOA", status, lines)
		}

		// Recursion: refused for a name outside the zones, to a client
		// outside the managed subnets, with or without upstream_dns.
		if status, _ := dig(t, ns, "example.org", "A"); status != "REFUSED" {
			t.Errorf("recursion with no upstream: %s; want REFUSED", status)
		}
		e.setConfig(e.admin, "upstream_dns", "198.51.100.53")
		time.Sleep(1200 * time.Millisecond)
		if status, _ := dig(t, ns, "example.org", "A"); status != "REFUSED" {
			t.Errorf("recursion from outside the managed subnets: %s; want REFUSED", status)
		}

		// Transfers: refused, then allowed to a listed address.
		if status, _ := dig(t, ns, "maas", "AXFR"); status != "TRANSFER FAILED" {
			t.Errorf("AXFR by anyone: %s; want it refused", status)
		}
		if code, body := e.setConfig(e.admin, "dns_trusted_acl", "127.0.0.1"); code != 200 {
			t.Fatalf("set dns_trusted_acl: %d %s", code, body)
		}
		within(t, "AXFR allowed to 127.0.0.1", 3*time.Second, func() bool {
			_, l := dig(t, ns, "maas", "AXFR")
			return slices.Contains(l, "vip.maas. 45 IN A 192.0.2.20")
		})
		e.setConfig(e.admin, "dns_trusted_acl", "")

		// A rename and a release: a new answer and a new serial within a
		// second.
		before := serialOf(t, ns)
		e.must(200, "PUT", "machines/"+m.SystemID+"/", e.admin, url.Values{"hostname": {"node9"}}, nil)
		t0 := time.Now()
		within(t, "node9.maas resolves after the rename", time.Second, func() bool {
			_, l := dig(t, ns, "node9.maas", "A")
			return slices.Contains(l, "node9.maas. 30 IN A 192.0.2.10")
		})
		t.Logf("rename answered in %s", time.Since(t0).Round(time.Millisecond))
		if s, _ := dig(t, ns, "node1.maas", "A"); s != "NXDOMAIN" {
			t.Errorf("the old name after a rename: %s; want NXDOMAIN", s)
		}
		after := serialOf(t, ns)
		if after <= before {
			t.Errorf("serial %d after a rename, %d before", after, before)
		}
		e.must(200, "POST", "machines/"+m.SystemID+"/?op=release", e.admin, nil, nil)
		within(t, "node9.maas gone after the release", time.Second, func() bool {
			s, _ := dig(t, ns, "node9.maas", "A")
			return s == "NXDOMAIN"
		})
		if serialOf(t, ns) <= after {
			t.Error("serial did not grow with the release")
		}

		// A rack of its own, following this region: it answers with the
		// region gone.
		rackDir := t.TempDir()
		r, err := rack.Start(context.Background(), rack.Config{DataDir: rackDir, RegionURL: e.base, APIKey: e.admin, DNSAddr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { r.Close() }()
		within(t, "the rack serves vip.maas", 3*time.Second, func() bool {
			_, l := dig(t, r.DNS.String(), "vip.maas", "A")
			return slices.Contains(l, "vip.maas. 45 IN A 192.0.2.20")
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.srv.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, l := dig(t, r.DNS.String(), "vip.maas", "A"); !slices.Contains(l, "vip.maas. 45 IN A 192.0.2.20") {
			t.Errorf("with the region gone the rack answers %q", l)
		}
		// Restarted with the region still gone, it answers from its cache.
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if r, err = rack.Start(context.Background(), rack.Config{DataDir: rackDir, RegionURL: e.base, APIKey: e.admin, DNSAddr: "127.0.0.1:0"}); err != nil {
			t.Fatal(err)
		}
		if _, l := dig(t, r.DNS.String(), "vip.maas", "A"); !slices.Contains(l, "vip.maas. 45 IN A 192.0.2.20") {
			t.Errorf("a rack restarted without its region answers %q", l)
		}
	}, withDNS)
}

// TestDNSFromIPAM: a deployed machine's assigned addresses (a STATIC link
// on its boot interface, an AUTO one on another) answer as host.domain
// and iface.host.domain, with PTRs, and the sighting of the boot NIC
// does not override the assigned address.
func TestDNSFromIPAM(t *testing.T) {
	needDig(t)
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		ns := e.srv.Rack.DNS.String()
		sn := e.newSubnet("192.0.2.0/24")
		m := e.addMachine("node7", "52:54:00:00:d7:01", url.Values{"mac_addresses": {"52:54:00:00:d7:01", "52:54:00:00:d7:02"}})
		ifs, err := e.srv.Store.ListInterfaces(ctx, m.SystemID)
		if err != nil || len(ifs) != 2 {
			t.Fatalf("interfaces: %+v %v", ifs, err)
		}
		var boot, other store.Interface
		for _, i := range ifs {
			i.VLANID = sn.VLAN.ID
			if i, err = e.srv.Store.UpdateInterface(ctx, i); err != nil {
				t.Fatal(err)
			}
			if i.Boot {
				boot = i
			} else {
				other = i
			}
		}
		for _, a := range []store.IPAddress{
			{IP: "192.0.2.50", SubnetID: sn.ID, AllocType: 1, InterfaceID: boot.ID},
			{IP: "192.0.2.51", SubnetID: sn.ID, AllocType: 0, InterfaceID: other.ID},
		} {
			if _, err := e.srv.Store.CreateIPAddress(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		e.deployed(m.SystemID)
		evs, _ := json.Marshal([]map[string]any{{"mac": "52:54:00:00:d7:01", "ip": "192.0.2.99", "kind": "dhcp", "detail": "ack", "at": time.Now()}})
		e.must(200, "POST", "rack/", e.admin, url.Values{"op": {"boot_events"}, "events": {string(evs)}}, nil)
		want := map[string]string{
			"node7.maas":               "node7.maas. 30 IN A 192.0.2.50",
			other.Name + ".node7.maas": other.Name + ".node7.maas. 30 IN A 192.0.2.51",
			"51.2.0.192.in-addr.arpa":  "51.2.0.192.in-addr.arpa. 30 IN PTR " + other.Name + ".node7.maas.",
		}
		within(t, "node7's assigned addresses resolve", 5*time.Second, func() bool {
			for name, w := range want {
				typ := "A"
				if strings.HasSuffix(name, ".arpa") {
					typ = "PTR"
				}
				if _, l := dig(t, ns, name, typ, "+norec"); !slices.Contains(l, w) {
					return false
				}
			}
			return true
		})
		if _, l := dig(t, ns, "node7.maas", "A", "+norec"); slices.Contains(l, "node7.maas. 30 IN A 192.0.2.99") {
			t.Fatalf("the boot NIC's sighting overrode its assigned address: %q", l)
		}
	}, withDNS)
}
