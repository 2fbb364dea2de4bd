package network

import (
	"net/netip"
	"strings"
	"testing"
)

func wantField(t *testing.T, e FieldErrors, field, words string) {
	t.Helper()
	if field == "" {
		if len(e) > 0 {
			t.Fatalf("want no error, got %v", e)
		}
		return
	}
	if !strings.Contains(strings.Join(e[field], " "), words) {
		t.Fatalf("want %q on %s, got %v", words, field, e)
	}
}

func TestValidateVLAN(t *testing.T) {
	cases := []struct {
		name         string
		v            VLAN
		field, words string
	}{
		{"tagged", VLAN{ID: 9, FabricID: 1, VID: 300}, "", ""},
		{"vid too big", VLAN{ID: 9, FabricID: 1, VID: 4095}, "vid", "between 0 and 4094"},
		{"vid negative", VLAN{ID: 9, FabricID: 1, VID: -1}, "vid", "between 0 and 4094"},
		{"vid taken on the fabric", VLAN{ID: 9, FabricID: 1, VID: 100}, "vid", "already exists"},
		{"vid free on another fabric", VLAN{ID: 9, FabricID: 2, VID: 100}, "", ""},
		{"MTU too big", VLAN{ID: 9, FabricID: 1, VID: 300, MTU: 70000}, "mtu", "between 552 and 65535"},
		{"relay to itself", VLAN{ID: 9, FabricID: 1, VID: 300, RelayVLAN: 9}, "relay_vlan", "itself"},
		{"relay to nothing", VLAN{ID: 9, FabricID: 1, VID: 300, RelayVLAN: 77}, "relay_vlan", "does not exist"},
		{"relay to a VLAN with DHCP", VLAN{ID: 9, FabricID: 1, VID: 300, RelayVLAN: 1}, "", ""},
		{"DHCP with a dynamic range", VLAN{ID: 1, FabricID: 1, VID: 0, DHCPOn: true}, "", ""},
		{"DHCP without one", VLAN{ID: 2, FabricID: 1, VID: 100, DHCPOn: true}, "dhcp_on", "when a dynamic IP range is defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantField(t, ValidateVLAN(site(), c.v), c.field, c.words) })
	}
}

func TestValidateSubnet(t *testing.T) {
	cases := []struct {
		name         string
		s            Subnet
		field, words string
	}{
		{"new", Subnet{ID: 9, VLANID: 1, CIDR: pfx("198.18.1.0/24"), Gateway: ip("198.18.1.1")}, "", ""},
		{"overlaps", Subnet{ID: 9, VLANID: 1, CIDR: pfx("192.0.2.128/25")}, "cidr", "would overlap with existing subnets"},
		{"host bits", Subnet{ID: 9, VLANID: 1, CIDR: pfx("198.18.1.5/24")}, "cidr", "host bits set"},
		{"no CIDR", Subnet{ID: 9, VLANID: 1}, "cidr", "required"},
		{"gateway outside", Subnet{ID: 9, VLANID: 1, CIDR: pfx("198.18.1.0/24"), Gateway: ip("198.18.2.1")}, "gateway_ip", "within CIDR range"},
		{"IPv6 link-local gateway", Subnet{ID: 9, VLANID: 1, CIDR: pfx("2001:db8:1::/64"), Gateway: ip("fe80::1")}, "", ""},
		{"DNS server with a zone", Subnet{ID: 9, VLANID: 1, CIDR: pfx("198.18.1.0/24"), DNSServers: []netip.Addr{ip("fe80::1%eth0")}}, "dns_servers", "not an IP address"},
		{"no VLAN", Subnet{ID: 9, VLANID: 42, CIDR: pfx("198.18.1.0/24")}, "vlan", "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantField(t, ValidateSubnet(site(), c.s), c.field, c.words) })
	}
}

func TestValidateRange(t *testing.T) {
	cases := []struct {
		name         string
		r            IPRange
		field, words string
	}{
		{"free", IPRange{ID: 9, SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.210"), End: ip("192.0.2.220")}, "", ""},
		{"overlaps the dynamic range", IPRange{ID: 9, SubnetID: 1, Type: RangeDynamic, Start: ip("192.0.2.190"), End: ip("192.0.2.220")}, "__all__", "conflicts with an existing IP address or range."},
		{"backwards", IPRange{ID: 9, SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.220"), End: ip("192.0.2.210")}, "end_ip", "must not be less"},
		{"outside", IPRange{ID: 9, SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.210"), End: ip("198.51.100.1")}, "end_ip", "End IP address must be within subnet: 192.0.2.0/24."},
		{"type unknown", IPRange{ID: 9, SubnetID: 1, Type: "static", Start: ip("192.0.2.210"), End: ip("192.0.2.211")}, "type", "not a valid type"},
		{"subnet unknown", IPRange{ID: 9, SubnetID: 42, Type: RangeReserved}, "subnet", "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantField(t, ValidateRange(site(), c.r), c.field, c.words) })
	}
}

func TestEffectiveMTU(t *testing.T) {
	n := site()
	for _, c := range []struct {
		i    Interface
		want int
	}{
		{Interface{VLANID: 1}, 1500},
		{Interface{VLANID: 3}, 9000},
		{Interface{VLANID: 3, MTU: 4000}, 4000},
		{Interface{VLANID: 42}, DefaultMTU},
	} {
		if got := EffectiveMTU(n, c.i); got != c.want {
			t.Errorf("EffectiveMTU(%+v) = %d, want %d", c.i, got, c.want)
		}
	}
}

func TestValidateRoute(t *testing.T) {
	cases := []struct {
		name         string
		r            StaticRoute
		field, words string
	}{
		{"on-link gateway", StaticRoute{SourceID: 2, Destination: pfx("198.18.10.0/24"), Gateway: ip("198.51.100.254")}, "", ""},
		{"no source", StaticRoute{SourceID: 42, Destination: pfx("198.18.10.0/24"), Gateway: ip("198.51.100.254")}, "source", "does not exist"},
		{"families differ", StaticRoute{SourceID: 2, Destination: pfx("2001:db8:5::/48"), Gateway: ip("198.51.100.254")}, "destination", "same IP version"},
		{"to itself", StaticRoute{SourceID: 2, Destination: pfx("198.51.100.0/24"), Gateway: ip("198.51.100.254")}, "destination", "cannot be the same subnet"},
		{"gateway off-link", StaticRoute{SourceID: 2, Destination: pfx("198.18.10.0/24"), Gateway: ip("192.0.2.254")}, "gateway_ip", "with in the source subnet"},
		{"metric negative", StaticRoute{SourceID: 2, Destination: pfx("198.18.10.0/24"), Gateway: ip("198.51.100.254"), Metric: -1}, "metric", "greater than or equal to 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantField(t, ValidateRoute(site(), c.r), c.field, c.words) })
	}
}
