package network

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The racks answer DNS on subnets 1 and 3 (VLAN 1) and 4; 203.0.113.53
// is on no subnet of the site.
var renderOpts = RenderOptions{SearchDomains: []string{"maas", "example.com"},
	DNSServers: []netip.Addr{ip("192.0.2.2"), ip("2001:db8::2"), ip("198.18.0.2"), ip("203.0.113.53")}}

func TestRenderGolden(t *testing.T) {
	for name, m := range shapes() {
		t.Run(name, func(t *testing.T) {
			got, err := Render(site(), m, renderOpts)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			again, _ := Render(site(), m, renderOpts)
			if string(again) != string(got) {
				t.Fatalf("two renders differ")
			}
			path := filepath.Join("testdata", name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("render differs from %s:\n%s", path, got)
			}
		})
	}
}

func TestRenderRefuses(t *testing.T) {
	cases := []struct {
		name  string
		m     Machine
		field string
		want  string
	}{
		{"vlan with no parent", Machine{Interfaces: []Interface{child(1, VLANIf, "vlan100", 2, nil)}}, "vlan100.parents", "exactly one parent"},
		{"address outside its subnet", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "198.51.100.5"))}}, "eth0.links.0.ip_address", "not in the given subnet"},
		{"AUTO not allocated", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1, Link{ID: 1, Mode: LinkAuto, SubnetID: 1})}}, "eth0.links.0.ip_address", "no address yet"},
		{"two IPv4 gateways, one a route", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10"))}}, "routes", "second default gateway"},
		{"subnet gateway of the other family", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10"))}}, "subnets.1.gateway_ip", "within CIDR range"},
		{"route off-link", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10"))}}, "routes.2.gateway_ip", "with in the source subnet"},
		{"bad search domain", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 1)}}, "search", "not a domain name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := site()
			opt := renderOpts
			switch c.field {
			case "routes":
				n.Routes = append(n.Routes, StaticRoute{ID: 2, SourceID: 1, Destination: pfx("0.0.0.0/0"), Gateway: ip("192.0.2.254")})
			case "subnets.1.gateway_ip":
				n.Subnets[0].Gateway = ip("2001:db8::1")
			case "routes.2.gateway_ip":
				n.Routes = append(n.Routes, StaticRoute{ID: 2, SourceID: 1, Destination: pfx("198.18.9.0/24"), Gateway: ip("198.51.100.9")})
			case "search":
				opt.SearchDomains = []string{"bad domain\n"}
			}
			out, err := Render(n, &c.m, opt)
			if err == nil {
				t.Fatalf("rendered:\n%s", out)
			}
			fe, ok := err.(FieldErrors)
			if !ok || !strings.Contains(strings.Join(fe[c.field], " "), c.want) {
				t.Fatalf("error %v; want %q on %s", err, c.want, c.field)
			}
		})
	}
}

// TestRackDNS: a subnet that allows DNS gets the racks' addresses of its
// family on its VLAN; without a gateway, only those inside it.
func TestRackDNS(t *testing.T) {
	n := site()
	n.Subnets = append(n.Subnets, Subnet{ID: 5, VLANID: 1, CIDR: pfx("198.51.200.0/24"), AllowDNS: true})
	r := renderer{n: n, opt: RenderOptions{DNSServers: []netip.Addr{ip("198.51.200.9"), ip("192.0.2.2"), ip("2001:db8::2"), ip("203.0.113.53")}}}
	cases := []struct {
		subnet int
		want   string
	}{
		{1, "[198.51.200.9 192.0.2.2]"}, // both on VLAN 1, which its gateway reaches
		{3, "[2001:db8::2]"},
		{2, "[]"}, // another VLAN
		{5, "[198.51.200.9]"},
	}
	for _, c := range cases {
		s, _ := n.Subnet(c.subnet)
		if got := fmt.Sprint(r.rackDNS(s)); got != c.want {
			t.Errorf("subnet %d: %s, want %s", c.subnet, got, c.want)
		}
	}
	// With a gateway, subnet 5 reaches the rack on subnet 1 of its VLAN.
	n.Subnets[4].Gateway = ip("198.51.200.1")
	if got := fmt.Sprint(r.rackDNS(n.Subnets[4])); got != "[198.51.200.9 192.0.2.2]" {
		t.Errorf("subnet 5 with a gateway: %s", got)
	}
}
