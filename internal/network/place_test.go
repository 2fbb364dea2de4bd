package network

import (
	"net/netip"
	"reflect"
	"testing"
)

// TestPlace: each NIC lands on the VLAN of the subnet it was seen on (the
// boot NIC with a DHCP link there), unseen ones on fabrics of their own,
// and what was placed or built before stays.
func TestPlace(t *testing.T) {
	seen := map[string]netip.Addr{mac1: ip("192.0.2.150"), mac2: ip("198.18.0.7"), "52:54:00:00:00:09": ip("203.0.113.5")}
	cases := []struct {
		name string
		m    Machine
		want []Placement
	}{
		{"boot NIC seen on a known subnet", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 0)}, BootInterface: 1},
			[]Placement{{InterfaceID: 1, VLANID: 1, DHCPSubnet: 1}}},
		{"a second NIC seen elsewhere gets that VLAN, no link", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 0), nic(2, "eth1", "52:54:00:00:00:02", 0)}, BootInterface: 1},
			[]Placement{{InterfaceID: 1, VLANID: 1, DHCPSubnet: 1}, {InterfaceID: 2, VLANID: 3}}},
		{"unseen NIC: a new fabric", Machine{Interfaces: []Interface{nic(1, "eth0", mac3, 0)}, BootInterface: 1},
			[]Placement{{InterfaceID: 1, NewFabric: true}}},
		{"seen on no known subnet: a new fabric", Machine{Interfaces: []Interface{nic(1, "eth0", "52:54:00:00:00:09", 0)}, BootInterface: 1},
			[]Placement{{InterfaceID: 1, NewFabric: true}}},
		{"MAC case does not matter", Machine{Interfaces: []Interface{nic(1, "eth0", "52:54:00:00:00:0A", 0)}},
			[]Placement{{InterfaceID: 1, NewFabric: true}}},
		{"already placed: left alone", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 2)}, BootInterface: 1}, nil},
		{"a bond's members are left alone", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 0), nic(2, "eth1", mac2, 0),
			child(3, Bond, "bond0", 1, []int{1, 2})}, BootInterface: 1}, nil},
		{"a boot NIC with links keeps them", Machine{Interfaces: []Interface{nic(1, "eth0", mac1, 0, static(1, 1, "192.0.2.10"))}, BootInterface: 1},
			[]Placement{{InterfaceID: 1, VLANID: 1}}},
	}
	for _, c := range cases {
		if got := Place(site(), &c.m, seen); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
