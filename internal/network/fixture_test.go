package network

import "net/netip"

// site is the network the tests' machines sit on: fabric 1 with its
// untagged VLAN (DHCP on) and VLAN 100, fabric 2 with jumbo frames.
func site() *Network {
	return &Network{
		Fabrics: []Fabric{{ID: 1, Name: "fabric-0"}, {ID: 2, Name: "fabric-1"}},
		VLANs: []VLAN{
			{ID: 1, FabricID: 1, VID: 0, Name: "untagged", DHCPOn: true},
			{ID: 2, FabricID: 1, VID: 100, Name: "storage"},
			{ID: 3, FabricID: 2, VID: 0, Name: "untagged", MTU: 9000},
			{ID: 4, FabricID: 1, VID: 200, Name: "jumbo", MTU: 9000},
		},
		Spaces: []Space{{ID: 1, Name: "public"}},
		Subnets: []Subnet{
			{ID: 1, VLANID: 1, CIDR: pfx("192.0.2.0/24"), Gateway: ip("192.0.2.1"), DNSServers: []netip.Addr{ip("192.0.2.53")}, Managed: true, AllowDNS: true},
			{ID: 2, VLANID: 2, CIDR: pfx("198.51.100.0/24"), Gateway: ip("198.51.100.1"), Managed: true, AllowDNS: true},
			{ID: 3, VLANID: 1, CIDR: pfx("2001:db8::/64"), Gateway: ip("2001:db8::1"), DNSServers: []netip.Addr{ip("2001:db8::53")}, Managed: true, AllowDNS: true},
			{ID: 4, VLANID: 3, CIDR: pfx("198.18.0.0/24"), Managed: true},
		},
		Ranges: []IPRange{
			{ID: 1, SubnetID: 1, Type: RangeDynamic, Start: ip("192.0.2.100"), End: ip("192.0.2.199")},
			{ID: 2, SubnetID: 1, Type: RangeReserved, Start: ip("192.0.2.2"), End: ip("192.0.2.9")},
		},
		Routes: []StaticRoute{{ID: 1, SourceID: 2, Destination: pfx("198.18.10.0/24"), Gateway: ip("198.51.100.254"), Metric: 100}},
	}
}

func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }
func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func nic(id int, name, mac string, vlan int, links ...Link) Interface {
	return Interface{ID: id, Name: name, Type: Physical, MAC: mac, VLANID: vlan, Enabled: true, Links: links}
}

func child(id int, t InterfaceType, name string, vlan int, parents []int, links ...Link) Interface {
	return Interface{ID: id, Name: name, Type: t, VLANID: vlan, Parents: parents, Enabled: true, Links: links}
}

func static(id, subnet int, a string) Link {
	return Link{ID: id, Mode: LinkStatic, SubnetID: subnet, IP: ip(a)}
}

const (
	mac1 = "52:54:00:00:00:01"
	mac2 = "52:54:00:00:00:02"
	mac3 = "52:54:00:00:00:03"
)

// shapes are the machines the golden files and the real tools check.
func shapes() map[string]*Machine {
	bond := child(3, Bond, "bond0", 1, []int{1, 2})
	bond.Bond = BondParams{Mode: "802.3ad", LACPRate: "fast", XmitHashPolicy: "layer3+4"}
	ab := child(3, Bond, "bond0", 1, []int{1, 2})
	ab.Bond = BondParams{Mode: "active-backup", UpDelay: 200, DownDelay: 200}
	fd := 4
	br := child(4, Bridge, "br0", 1, []int{3}, static(1, 1, "192.0.2.20"))
	br.Bridge = BridgeParams{Type: BridgeStandard, STP: true, ForwardDelay: &fd}
	ovs := child(2, Bridge, "br-ex", 1, []int{1}, static(1, 1, "192.0.2.30"))
	ovs.Bridge = BridgeParams{Type: BridgeOVS}
	return map[string]*Machine{
		"bridge-ovs": {Interfaces: []Interface{nic(1, "eth0", mac1, 1), ovs}, BootInterface: 1},
		"dhcp":       {Interfaces: []Interface{nic(1, "eth0", mac1, 1, Link{ID: 1, Mode: LinkDHCP, SubnetID: 1})}, BootInterface: 1},
		"static":     {Interfaces: []Interface{nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10"))}, BootInterface: 1},
		"bond-vlan": {Interfaces: []Interface{
			nic(1, "eth0", mac1, 1), nic(2, "eth1", mac2, 1), bond,
			child(4, VLANIf, "bond0.100", 2, []int{3}, static(1, 2, "198.51.100.10")),
		}, BootInterface: 1},
		"bridge-bond": {Interfaces: []Interface{nic(1, "eth0", mac1, 1), nic(2, "eth1", mac2, 1), ab, br}, BootInterface: 1},
		"two-families": {Interfaces: []Interface{
			nic(1, "eth0", mac1, 1, static(1, 1, "192.0.2.10"), static(2, 3, "2001:db8::10")),
			nic(2, "eth1", mac3, 3, Link{ID: 3, Mode: LinkAuto, SubnetID: 4, IP: ip("198.18.0.1")}),
		}, BootInterface: 1},
	}
}
