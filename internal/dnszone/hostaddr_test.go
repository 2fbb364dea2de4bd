package dnszone

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestHostAddrs(t *testing.T) {
	a := netip.MustParseAddr
	eth0 := Iface{ID: 1, Name: "eth0", Type: "physical", Boot: true}
	eth1 := Iface{ID: 2, Name: "eth1", Type: "physical"}
	eth2 := Iface{ID: 5, Name: "eth2", Type: "physical"}
	bond := Iface{ID: 3, Name: "bond0", Type: "bond", Parents: []int64{1, 2}}
	br := Iface{ID: 4, Name: "br0", Type: "bridge", Parents: []int64{3}}
	cases := []struct {
		name   string
		ifaces []Iface
		cands  []Candidate
		want   string
	}{
		{"DHCP boot NIC: its sighting is the name",
			[]Iface{eth0, eth1}, []Candidate{{1, Discovered, a("192.0.2.99")}},
			"[{eth0 true 192.0.2.99}]"},
		// The stale sighting of the NIC the bond took over is dropped.
		{"bond over the boot NIC beats the NIC's old sighting",
			[]Iface{eth0, eth1, bond}, []Candidate{{1, Discovered, a("192.0.2.99")}, {3, Sticky, a("192.0.2.10")}},
			"[{bond0 true 192.0.2.10}]"},
		{"bridge over the bond over the boot NIC wins",
			[]Iface{eth0, eth1, bond, br}, []Candidate{{3, Auto, a("192.0.2.11")}, {4, Sticky, a("192.0.2.12")}},
			"[{br0 true 192.0.2.12} {bond0 false 192.0.2.11}]"},
		{"sticky before AUTO on one interface",
			[]Iface{eth0}, []Candidate{{1, Auto, a("192.0.2.21")}, {1, Sticky, a("192.0.2.22")}},
			"[{eth0 true 192.0.2.22} {eth0 false 192.0.2.21}]"},
		{"boot interfaces first: another NIC's static is its own name",
			[]Iface{eth0, eth2}, []Candidate{{5, Sticky, a("192.0.2.30")}, {1, Discovered, a("192.0.2.99")}},
			"[{eth0 true 192.0.2.99} {eth2 false 192.0.2.30}]"},
		{"no boot address: the best other one, per family",
			[]Iface{eth0, eth1, eth2}, []Candidate{{5, Auto, a("192.0.2.40")}, {2, Sticky, a("2001:db8::41")}, {2, Sticky, a("192.0.2.41")}},
			"[{eth1 true 192.0.2.41} {eth1 true 2001:db8::41} {eth2 false 192.0.2.40}]"},
		{"discovered on another NIC left out beside assigned",
			[]Iface{eth0, eth2}, []Candidate{{1, Sticky, a("192.0.2.50")}, {5, Discovered, a("192.0.2.98")}},
			"[{eth0 true 192.0.2.50}]"},
		{"boot family only: no non-boot address for the other family",
			[]Iface{eth0, eth2}, []Candidate{{1, Sticky, a("192.0.2.50")}, {5, Sticky, a("2001:db8::5")}},
			"[{eth0 true 192.0.2.50} {eth2 false 2001:db8::5}]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(HostAddrs(c.ifaces, c.cands)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
