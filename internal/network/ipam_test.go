package network

import (
	"net/netip"
	"strings"
	"testing"
)

func TestNextFree(t *testing.T) {
	usedOf := func(addrs ...string) Used {
		set := map[netip.Addr]bool{}
		for _, a := range addrs {
			set[ip(a)] = true
		}
		return func(a netip.Addr) bool { return set[a] }
	}
	cases := []struct {
		name   string
		subnet Subnet
		ranges []IPRange
		used   Used
		want   string // "" for exhausted
	}{
		// .1 is the gateway, .2-.9 reserved: the first free is .10.
		{"after gateway and reserved range", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/24"), Gateway: ip("192.0.2.1")},
			[]IPRange{{SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.2"), End: ip("192.0.2.9")}}, nil, "192.0.2.10"},
		{"skips used and DNS servers", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/24"), DNSServers: []netip.Addr{ip("192.0.2.2")}},
			nil, usedOf("192.0.2.1", "192.0.2.3"), "192.0.2.4"},
		{"skips a dynamic range", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/29")},
			[]IPRange{{SubnetID: 1, Type: RangeDynamic, Start: ip("192.0.2.1"), End: ip("192.0.2.5")}}, nil, "192.0.2.6"},
		{"never the broadcast address", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/30")}, nil, usedOf("192.0.2.1", "192.0.2.2"), ""},
		{"/31 uses both addresses", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/31")}, nil, usedOf("192.0.2.0"), "192.0.2.1"},
		{"/32 is its one address", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.7/32")}, nil, nil, "192.0.2.7"},
		{"IPv6 /64 skips the first 2^32", Subnet{ID: 1, Managed: true, CIDR: pfx("2001:db8::/64"), Gateway: ip("2001:db8::1")}, nil, nil, "2001:db8::1:0:0"},
		{"IPv6 /80 skips the subnet-router address", Subnet{ID: 1, Managed: true, CIDR: pfx("2001:db8::/80"), Gateway: ip("2001:db8::1")}, nil, nil, "2001:db8::2"},
		{"a huge reserved range is one step", Subnet{ID: 1, Managed: true, CIDR: pfx("2001:db8::/64")},
			[]IPRange{{SubnetID: 1, Type: RangeReserved, Start: ip("2001:db8::1:0:0"), End: ip("2001:db8::ffff:ffff:ffff:fffe")}}, nil, "2001:db8::ffff:ffff:ffff:ffff"},
		{"skips a static route's router", Subnet{ID: 2, Managed: true, CIDR: pfx("198.51.100.0/24"), Gateway: ip("198.51.100.254")}, nil, nil, "198.51.100.2"},
		{"unmanaged: inside reserved ranges only", Subnet{ID: 1, CIDR: pfx("192.0.2.0/24"), Gateway: ip("192.0.2.1")},
			[]IPRange{{SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.50"), End: ip("192.0.2.60")}, {SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.20"), End: ip("192.0.2.21")}}, usedOf("192.0.2.20"), "192.0.2.21"},
		{"unmanaged: no reserved range, nothing", Subnet{ID: 1, CIDR: pfx("192.0.2.0/24")}, nil, nil, ""},
		{"ranges of other subnets do not count", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/24")},
			[]IPRange{{SubnetID: 2, Type: RangeDynamic, Start: ip("192.0.2.1"), End: ip("192.0.2.9")}}, nil, "192.0.2.1"},
		{"full", Subnet{ID: 1, Managed: true, CIDR: pfx("192.0.2.0/29")},
			[]IPRange{{SubnetID: 1, Type: RangeDynamic, Start: ip("192.0.2.1"), End: ip("192.0.2.6")}}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &Network{Subnets: []Subnet{c.subnet}, Ranges: c.ranges,
				Routes: []StaticRoute{{SourceID: 2, Destination: pfx("198.18.0.0/16"), Gateway: ip("198.51.100.1")}}}
			got, err := NextFree(n, c.subnet, c.used)
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), "No more IPs available") {
					t.Fatalf("got %v, %v; want exhaustion", got, err)
				}
				return
			}
			if err != nil || got != ip(c.want) {
				t.Fatalf("got %v, %v; want %s", got, err, c.want)
			}
			// What NextFree hands out passes the STATIC rule.
			if e := checkAddress(n, c.subnet, got, c.used); len(e) > 0 {
				t.Fatalf("%s fails the address rule: %v", got, e)
			}
		})
	}
}

func TestDefaultGateways(t *testing.T) {
	auto := func(id, subnet int, a string) Link { return Link{ID: id, Mode: LinkAuto, SubnetID: subnet, IP: ip(a)} }
	cases := []struct {
		name     string
		ifaces   []Interface
		boot     int
		gw4, gw6 int
		want4    int // the interface that carries the gateway, 0 for none
		want6    int
	}{
		{"the only one", []Interface{eth0(static(1, 1, "192.0.2.10"))}, 1, 0, 0, 1, 0},
		{"both families on one NIC", []Interface{eth0(static(1, 1, "192.0.2.10"), static(2, 3, "2001:db8::10"))}, 1, 0, 0, 1, 1},
		{"DHCP and LINK_UP give none", []Interface{eth0(Link{ID: 1, Mode: LinkDHCP, SubnetID: 1}), nic(2, "eth1", mac2, 1, Link{ID: 2, Mode: LinkUp, SubnetID: 1})}, 1, 0, 0, 0, 0},
		{"a subnet with no gateway gives none", []Interface{nic(1, "eth0", mac1, 3, auto(1, 4, "198.18.0.5"))}, 1, 0, 0, 0, 0},
		{"managed VLAN first", []Interface{nic(1, "eth0", mac1, 2, static(1, 2, "198.51.100.5")), nic(2, "eth1", mac2, 1, auto(2, 1, "192.0.2.10"))}, 1, 0, 0, 2, 0},
		{"bond before the boot NIC", []Interface{eth0(static(1, 1, "192.0.2.10")), eth1(1), nic(4, "eth2", mac3, 1), bondOf(3, "bond0", 1, "", 2, 4)}, 1, 0, 0, 1, 0},
		{"bond before the boot NIC, bond linked", []Interface{eth0(static(1, 1, "192.0.2.10")), eth1(1), nic(4, "eth2", mac3, 1), withLinks(bondOf(3, "bond0", 1, "", 2, 4), static(2, 1, "192.0.2.11"))}, 1, 0, 0, 3, 0},
		{"boot NIC before another NIC", []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10")), nic(2, "eth1", mac2, 1, static(2, 1, "192.0.2.11"))}, 2, 0, 0, 2, 0},
		{"NIC before VLAN interface", []Interface{eth0(), withLinks(child(3, VLANIf, "eth0.100", 2, []int{1}), static(1, 2, "198.51.100.5")), nic(2, "eth1", mac2, 2, static(2, 2, "198.51.100.6"))}, 1, 0, 0, 2, 0},
		{"STATIC before AUTO", []Interface{eth0(auto(1, 1, "192.0.2.10")), nic(2, "eth1", mac2, 1, static(2, 1, "192.0.2.11"))}, 9, 0, 0, 2, 0},
		{"lowest interface ID last", []Interface{nic(2, "eth1", mac2, 1, static(2, 1, "192.0.2.11")), eth0(static(1, 1, "192.0.2.10"))}, 9, 0, 0, 1, 0},
		{"the owner's choice wins", []Interface{eth0(static(1, 1, "192.0.2.10")), nic(2, "eth1", mac2, 1, static(2, 1, "192.0.2.11"))}, 1, 2, 0, 2, 0},
		{"a choice that cannot serve is ignored", []Interface{eth0(static(1, 1, "192.0.2.10")), nic(2, "eth1", mac2, 1, Link{ID: 2, Mode: LinkDHCP, SubnetID: 1})}, 1, 2, 0, 1, 0},
		{"a disabled interface gives none", []Interface{disabled(eth0(static(1, 1, "192.0.2.10")))}, 1, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := DefaultGateways(site(), &Machine{Interfaces: c.ifaces, BootInterface: c.boot, GatewayLink4: c.gw4, GatewayLink6: c.gw6})
			if g.IPv4.InterfaceID != c.want4 || g.IPv6.InterfaceID != c.want6 {
				t.Fatalf("gateways on %d and %d, want %d and %d (%+v)", g.IPv4.InterfaceID, g.IPv6.InterfaceID, c.want4, c.want6, g)
			}
		})
	}
}

func withLinks(i Interface, l ...Link) Interface { i.Links = l; return i }
