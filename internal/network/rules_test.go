package network

import (
	"net/netip"
	"strings"
	"testing"
)

func bondOf(id int, name string, vlan int, mode BondMode, parents ...int) Interface {
	b := child(id, Bond, name, vlan, parents)
	b.Bond.Mode = mode
	return b
}

func withMTU(i Interface, mtu int) Interface { i.MTU = mtu; return i }

func disabled(i Interface) Interface { i.Enabled = false; return i }

func withMAC(i Interface, mac string) Interface { i.MAC = mac; return i }

func eth0(links ...Link) Interface { return nic(1, "eth0", mac1, 1, links...) }
func eth1(vlan int) Interface      { return nic(2, "eth1", mac2, vlan) }

// TestValidate covers each rule: the machine, and the field that must
// carry a message with the words given ("" for a machine that is fine).
func TestValidate(t *testing.T) {
	bridgeType := func(i Interface, bt BridgeType, fd int) Interface {
		i.Bridge = BridgeParams{Type: bt, ForwardDelay: &fd}
		return i
	}
	bondParams := func(i Interface, p BondParams) Interface { i.Bond = p; return i }
	cases := []struct {
		name   string
		ifaces []Interface
		gw4    int
		gw6    int
		field  string
		words  string
	}{
		// Bonds.
		{"802.3ad bond of two NICs", []Interface{eth0(), eth1(1), bondOf(3, "bond0", 1, "802.3ad", 1, 2)}, 0, 0, "", ""},
		{"bond without parents", []Interface{bondOf(3, "bond0", 1, "")}, 0, 0, "bond0.parents", "one or more parents"},
		{"bond of a VLAN interface", []Interface{eth0(), child(2, VLANIf, "eth0.100", 2, []int{1}), bondOf(3, "bond0", 2, "", 2)}, 0, 0, "bond0.parents", "must be physical"},
		{"bond member in another bond", []Interface{eth0(), eth1(1), bondOf(3, "bond0", 1, "", 1, 2), bondOf(4, "bond1", 1, "", 2)}, 0, 0, "bond1.parents", "Interfaces already in-use: eth1."},
		{"bond member carrying a VLAN", []Interface{eth0(), eth1(1), child(4, VLANIf, "eth1.100", 2, []int{2}), bondOf(3, "bond0", 1, "", 1, 2)}, 0, 0, "bond0.parents", "Interfaces already in-use: eth1."},
		{"bond over two VLANs", []Interface{eth0(), eth1(2), bondOf(3, "bond0", 1, "", 1, 2)}, 0, 0, "bond0.parents", "All parents must belong to the same VLAN."},
		{"bond over two fabrics", []Interface{eth0(), eth1(3), bondOf(3, "bond0", 1, "", 1, 2)}, 0, 0, "bond0.parents", "same VLAN"},
		{"bond of an unknown interface", []Interface{eth0(), bondOf(3, "bond0", 1, "", 1, 9)}, 0, 0, "bond0.parents", "not an interface of this machine"},
		{"bond mode unknown", []Interface{eth0(), bondOf(3, "bond0", 1, "fastest", 1)}, 0, 0, "bond0.bond_mode", "'fastest' is not a valid bond_mode"},
		{"bond LACP rate unknown", []Interface{eth0(), bondParams(bondOf(3, "bond0", 1, "", 1), BondParams{LACPRate: "medium"})}, 0, 0, "bond0.bond_lacp_rate", "not a valid"},
		{"bond hash policy unknown", []Interface{eth0(), bondParams(bondOf(3, "bond0", 1, "", 1), BondParams{XmitHashPolicy: "layer9"})}, 0, 0, "bond0.bond_xmit_hash_policy", "not a valid"},
		{"bond miimon negative", []Interface{eth0(), bondParams(bondOf(3, "bond0", 1, "", 1), BondParams{MIIMon: -1})}, 0, 0, "bond0.bond_miimon", "greater than or equal to 0"},
		{"bond member with an address", []Interface{eth0(static(1, 1, "192.0.2.10")), bondOf(3, "bond0", 1, "", 1)}, 0, 0, "eth0.links", "belong on bond0"},
		{"bond member LINK_UP", []Interface{eth0(Link{ID: 1, Mode: LinkUp}), bondOf(3, "bond0", 1, "", 1)}, 0, 0, "", ""},
		// Bridges.
		{"bridge over a bond", []Interface{eth0(), eth1(1), bondOf(3, "bond0", 1, "", 1, 2), child(4, Bridge, "br0", 1, []int{3})}, 0, 0, "", ""},
		{"bridge over a NIC with a VLAN", []Interface{eth0(), child(2, VLANIf, "eth0.100", 2, []int{1}), child(4, Bridge, "br0", 1, []int{1})}, 0, 0, "", ""},
		{"bridge without parents", []Interface{child(4, Bridge, "br0", 1, nil)}, 0, 0, "br0.parents", "at least one parent"},
		{"bridge over a bridge", []Interface{eth0(), child(3, Bridge, "br0", 1, []int{1}), child(4, Bridge, "br1", 1, []int{3})}, 0, 0, "br1.parents", "another bridge interface as parent"},
		{"bridge over a bond member", []Interface{eth0(), bondOf(3, "bond0", 1, "", 1), child(4, Bridge, "br0", 1, []int{1})}, 0, 0, "br0.parents", "already in a bond or a bridge"},
		{"bridge type unknown", []Interface{eth0(), bridgeType(child(4, Bridge, "br0", 1, []int{1}), "linuxbridge", 15)}, 0, 0, "br0.bridge_type", "not a valid bridge_type"},
		{"bridge OVS", []Interface{eth0(), bridgeType(child(4, Bridge, "br0", 1, []int{1}), BridgeOVS, 0)}, 0, 0, "", ""},
		{"bridge forward delay negative", []Interface{eth0(), bridgeType(child(4, Bridge, "br0", 1, []int{1}), BridgeStandard, -1)}, 0, 0, "br0.bridge_fd", "greater than or equal to 0"},
		// VLAN interfaces.
		{"VLAN on a NIC", []Interface{eth0(), child(2, VLANIf, "eth0.100", 2, []int{1})}, 0, 0, "", ""},
		{"VLAN with two parents", []Interface{eth0(), eth1(1), child(3, VLANIf, "vlan100", 2, []int{1, 2})}, 0, 0, "vlan100.parents", "exactly one parent"},
		{"VLAN on a VLAN", []Interface{eth0(), child(2, VLANIf, "eth0.100", 2, []int{1}), child(3, VLANIf, "eth0.100.200", 4, []int{2})}, 0, 0, "eth0.100.200.parents", "another VLAN interface as parent"},
		{"VLAN on a bond member", []Interface{eth0(), bondOf(3, "bond0", 1, "", 1), child(4, VLANIf, "eth0.100", 2, []int{1})}, 0, 0, "eth0.100.parents", "already in a bond"},
		{"VLAN interface on the untagged VLAN", []Interface{eth0(), child(2, VLANIf, "eth0.0", 1, []int{1})}, 0, 0, "eth0.0.vlan", "only belong to a tagged VLAN"},
		{"VLAN interface on another fabric", []Interface{eth0(), child(2, VLANIf, "eth0.5", 5, []int{1})}, 0, 0, "eth0.5.vlan", "same fabric as its parent"},
		{"VLAN vid twice on a parent", []Interface{eth0(), child(2, VLANIf, "eth0.100", 2, []int{1}), child(3, VLANIf, "vlan100", 2, []int{1})}, 0, 0, "vlan100.vlan", "eth0 already has VLAN 100"},
		{"VLAN interface with no VLAN", []Interface{eth0(), child(2, VLANIf, "eth0.x", 0, []int{1})}, 0, 0, "eth0.x.vlan", "must be connected to a tagged VLAN"},
		// Physical interfaces and names.
		{"physical with a parent", []Interface{eth0(), {ID: 2, Name: "eth1", Type: Physical, MAC: mac2, VLANID: 1, Parents: []int{1}, Enabled: true}}, 0, 0, "eth1.parents", "cannot have parents"},
		{"MAC not a MAC", []Interface{withMAC(eth0(), "52:54:00:zz:00:01")}, 0, 0, "eth0.mac_address", "not a valid MAC address"},
		{"MAC missing", []Interface{withMAC(eth0(), "")}, 0, 0, "eth0.mac_address", "not a valid MAC address"},
		{"MAC twice", []Interface{eth0(), withMAC(eth1(1), strings.ToUpper(mac1))}, 0, 0, "eth1.mac_address", "already the MAC of eth0"},
		{"name twice", []Interface{eth0(), nic(2, "eth0", mac2, 1)}, 0, 0, "eth0.name", "already has an interface named 'eth0'"},
		{"name with a slash", []Interface{nic(1, "eth/0", mac1, 1)}, 0, 0, "eth/0.name", "not valid"},
		{"name too long", []Interface{nic(1, "enp0s31f6abcdefgh", mac1, 1)}, 0, 0, "enp0s31f6abcdefgh.name", "not valid"},
		{"ID twice", []Interface{eth0(), nic(1, "eth1", mac2, 1)}, 0, 0, "eth1.id", "used twice"},
		{"type unknown", []Interface{{ID: 1, Name: "wl0", Type: "wifi", VLANID: 1, Enabled: true}}, 0, 0, "wl0.type", "Invalid interface type 'wifi'."},
		{"interface on no VLAN", []Interface{nic(1, "eth0", mac1, 42)}, 0, 0, "eth0.vlan", "VLAN 42 does not exist"},
		{"its own parent", []Interface{eth0(), child(2, Bridge, "br0", 1, []int{2})}, 0, 0, "br0.parents", "own parent"},
		{"a cycle", []Interface{child(1, Bridge, "br0", 1, []int{2}), child(2, VLANIf, "br0.100", 2, []int{1})}, 0, 0, "br0.parents", "own ancestor"},
		{"enabled child of a disabled NIC", []Interface{disabled(eth0()), child(2, VLANIf, "eth0.100", 2, []int{1})}, 0, 0, "eth0.100.enabled", "its parent eth0 is not"},
		// MTU.
		{"child MTU above its parent's", []Interface{eth0(), withMTU(child(2, VLANIf, "eth0.100", 2, []int{1}), 9000)}, 0, 0, "eth0.100.mtu", "MTU 9000 is greater than the MTU 1500 of parent eth0"},
		{"jumbo VLAN on a 1500 NIC", []Interface{eth0(), child(2, VLANIf, "eth0.200", 4, []int{1})}, 0, 0, "eth0.200.mtu", "greater than"},
		{"jumbo VLAN on a jumbo NIC", []Interface{withMTU(eth0(), 9000), child(2, VLANIf, "eth0.200", 4, []int{1})}, 0, 0, "", ""},
		{"MTU too small", []Interface{withMTU(eth0(), 100)}, 0, 0, "eth0.mtu", "between 552 and 65535"},
		// Links.
		{"STATIC in the subnet", []Interface{eth0(static(1, 1, "192.0.2.10"))}, 0, 0, "", ""},
		{"STATIC in a reserved range", []Interface{eth0(static(1, 1, "192.0.2.5"))}, 0, 0, "", ""},
		{"STATIC outside the subnet", []Interface{eth0(static(1, 1, "198.51.100.5"))}, 0, 0, "eth0.links.0.ip_address", "IP address is not in the given subnet '192.0.2.0/24'."},
		{"STATIC on the network address", []Interface{eth0(static(1, 1, "192.0.2.0"))}, 0, 0, "eth0.links.0.ip_address", "network or broadcast"},
		{"STATIC on the broadcast address", []Interface{eth0(static(1, 1, "192.0.2.255"))}, 0, 0, "eth0.links.0.ip_address", "network or broadcast"},
		{"STATIC on the gateway", []Interface{eth0(static(1, 1, "192.0.2.1"))}, 0, 0, "eth0.links.0.ip_address", "is the gateway"},
		{"STATIC in a dynamic range", []Interface{eth0(static(1, 1, "192.0.2.150"))}, 0, 0, "eth0.links.0.ip_address", "IP address is inside a dynamic range 192.0.2.100-192.0.2.199."},
		{"STATIC held by another", []Interface{eth0(static(1, 1, "192.0.2.77"))}, 0, 0, "eth0.links.0.ip_address", "IP address is already in use."},
		{"STATIC twice on the machine", []Interface{eth0(static(1, 1, "192.0.2.10")), nic(2, "eth1", mac2, 1, static(2, 1, "192.0.2.10"))}, 0, 0, "eth1.ip_address", "already on eth0"},
		{"AUTO without a subnet", []Interface{eth0(Link{ID: 1, Mode: LinkAuto})}, 0, 0, "eth0.links.0.subnet", "This field is required."},
		{"AUTO not yet allocated", []Interface{eth0(Link{ID: 1, Mode: LinkAuto, SubnetID: 1})}, 0, 0, "", ""},
		{"link to an unknown subnet", []Interface{eth0(Link{ID: 1, Mode: LinkDHCP, SubnetID: 99})}, 0, 0, "eth0.links.0.subnet", "Subnet 99 does not exist"},
		{"link to a subnet on another VLAN", []Interface{eth0(static(1, 2, "198.51.100.5"))}, 0, 0, "eth0.links.0.subnet", "not on the VLAN of eth0"},
		{"two DHCP links", []Interface{eth0(Link{ID: 1, Mode: LinkDHCP, SubnetID: 1}, Link{ID: 2, Mode: LinkDHCP, SubnetID: 3})}, 0, 0, "eth0.links.1.mode", "Interface is already set to DHCP."},
		{"LINK_UP beside an address", []Interface{eth0(static(1, 1, "192.0.2.10"), Link{ID: 2, Mode: LinkUp})}, 0, 0, "eth0.links.1.mode", "Cannot configure interface to link up"},
		{"link mode unknown", []Interface{eth0(Link{ID: 1, Mode: "bootp"})}, 0, 0, "eth0.links.0.mode", "'bootp' is not a valid mode"},
		{"an address on a DHCP link", []Interface{eth0(Link{ID: 1, Mode: LinkDHCP, SubnetID: 1, IP: ip("192.0.2.10")})}, 0, 0, "eth0.links.0.ip_address", "only given in STATIC mode"},
		// Gateways.
		{"gateway chosen", []Interface{eth0(static(1, 1, "192.0.2.10"), static(2, 3, "2001:db8::10"))}, 1, 2, "", ""},
		{"gateway on a DHCP link", []Interface{eth0(Link{ID: 1, Mode: LinkDHCP, SubnetID: 1})}, 1, 0, "gateway_link_ipv4", "Cannot use in mode 'DHCP'."},
		{"gateway on a subnet without one", []Interface{nic(1, "eth0", mac1, 3, Link{ID: 1, Mode: LinkAuto, SubnetID: 4})}, 1, 0, "gateway_link_ipv4", "doesn't provide a gateway IP address"},
		{"IPv4 gateway on an IPv6 link", []Interface{eth0(static(2, 3, "2001:db8::10"))}, 2, 0, "gateway_link_ipv4", "not of this address family"},
		{"gateway on no link", []Interface{eth0()}, 0, 7, "gateway_link_ipv6", "not a link of this machine"},
	}
	used := func(a netip.Addr) bool { return a == ip("192.0.2.77") }
	n := site()
	n.VLANs = append(n.VLANs, VLAN{ID: 5, FabricID: 2, VID: 5})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &Machine{Interfaces: c.ifaces, BootInterface: 1, GatewayLink4: c.gw4, GatewayLink6: c.gw6}
			e := Validate(n, m, used)
			if c.field == "" {
				if len(e) > 0 {
					t.Fatalf("want no error, got %v", e)
				}
				return
			}
			if !strings.Contains(strings.Join(e[c.field], " "), c.words) {
				t.Fatalf("want %q on %s, got %v", c.words, c.field, e)
			}
		})
	}
}
