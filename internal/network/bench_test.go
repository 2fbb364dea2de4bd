package network

import (
	"fmt"
	"net/netip"
	"testing"
)

// sixteen is a 16-NIC machine: eight active-backup bonds of two NICs,
// each with VLAN 100 on top holding a STATIC address.
func sixteen() *Machine {
	m := &Machine{BootInterface: 1}
	for b := 0; b < 8; b++ {
		a, c := 1+2*b, 2+2*b
		m.Interfaces = append(m.Interfaces,
			nic(a, fmt.Sprintf("eth%d", a-1), fmt.Sprintf("52:54:00:00:01:%02x", a), 1),
			nic(c, fmt.Sprintf("eth%d", c-1), fmt.Sprintf("52:54:00:00:01:%02x", c), 1),
			bondOf(100+b, fmt.Sprintf("bond%d", b), 1, "active-backup", a, c),
			child(200+b, VLANIf, fmt.Sprintf("bond%d.100", b), 2, []int{100 + b}, static(b+1, 2, fmt.Sprintf("198.51.100.%d", 10+b))))
	}
	return m
}

func BenchmarkRender16NICs(b *testing.B) {
	n, m := site(), sixteen()
	if _, err := Render(n, m, renderOpts); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Render(n, m, renderOpts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextFree allocates on a /16 whose first 10,000 addresses are
// taken.
func BenchmarkNextFree(b *testing.B) {
	s := Subnet{ID: 1, Managed: true, CIDR: pfx("198.18.0.0/16"), Gateway: ip("198.18.0.1")}
	n := &Network{Subnets: []Subnet{s}}
	used := map[netip.Addr]bool{}
	for a, k := ip("198.18.0.2"), 0; k < 10000; a, k = a.Next(), k+1 {
		used[a] = true
	}
	for b.Loop() {
		if _, err := NextFree(n, s, func(a netip.Addr) bool { return used[a] }); err != nil {
			b.Fatal(err)
		}
	}
}
