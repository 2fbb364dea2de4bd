package network

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var renderOpts = RenderOptions{SearchDomains: []string{"maas", "example.com"}}

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
