package network

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// bytesIn hands out a fuzz input a byte at a time, zeros once spent.
type bytesIn struct{ b []byte }

func (r *bytesIn) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

// machineFrom builds a machine on site() from fuzz bytes: mostly sensible
// names and MACs, so that valid models come up often, with odd ones mixed
// in.
func machineFrom(data []byte) *Machine {
	r := &bytesIn{data}
	types := []InterfaceType{Physical, Physical, Bond, Bridge, VLANIf, "wifi"}
	modes := []LinkMode{LinkAuto, LinkStatic, LinkDHCP, LinkUp, "bogus"}
	oddNames := []string{"no", "1", "eth0", "a\"b", "", "x:y", "br-ex", "ünï"}
	subnetIPs := map[int][]string{1: {"192.0.2.10", "192.0.2.150", "192.0.2.255"}, 2: {"198.51.100.7", "198.51.100.1"}, 3: {"2001:db8::7", "2001:db8::"}, 4: {"198.18.0.9", "198.18.0.255"}}
	m := &Machine{BootInterface: 1}
	count := 1 + r.next()%8
	for k := 1; k <= count; k++ {
		i := Interface{ID: k, Name: fmt.Sprintf("if%d", k), Type: types[r.next()%len(types)], VLANID: 1 + r.next()%5, Enabled: r.next()%8 != 0}
		if v := r.next(); v%7 == 0 {
			i.Name = oddNames[v%len(oddNames)]
		}
		if i.Type == Physical || r.next()%4 == 0 {
			i.MAC = fmt.Sprintf("52:54:00:00:00:%02x", k)
			if r.next()%16 == 0 {
				i.MAC = "52:54:00:00:00:01"
			}
		}
		if i.Type != Physical || r.next()%16 == 0 {
			for p := r.next() % 3; p >= 0 && k > 1; p-- {
				i.Parents = append(i.Parents, 1+r.next()%count)
			}
		}
		i.MTU = []int{0, 0, 1500, 9000, 100}[r.next()%5]
		i.Bond = BondParams{Mode: []BondMode{"", "802.3ad", "active-backup", "balance-xor", "x"}[r.next()%5], MIIMon: r.next() - 8}
		if r.next()%2 == 0 {
			fd := r.next() - 4
			i.Bridge = BridgeParams{Type: []BridgeType{"", BridgeOVS, BridgeStandard, "y"}[r.next()%4], STP: r.next()%2 == 0, ForwardDelay: &fd}
		}
		for l := r.next() % 3; l > 0; l-- {
			link := Link{ID: 10*k + l, Mode: modes[r.next()%len(modes)], SubnetID: r.next() % 6}
			if ips := subnetIPs[link.SubnetID]; len(ips) > 0 && r.next()%4 != 0 {
				link.IP = netip.MustParseAddr(ips[r.next()%len(ips)])
			}
			i.Links = append(i.Links, link)
		}
		m.Interfaces = append(m.Interfaces, i)
	}
	m.GatewayLink4 = r.next() % 40
	m.GatewayLink6 = r.next() % 40
	return m
}

// FuzzRender: nothing panics, and a machine that validates, with every
// address allocated, renders, the same bytes twice, naming each enabled
// interface.
func FuzzRender(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0})
	f.Add([]byte{3, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 1, 0, 0})
	f.Add([]byte("\x04\x00\x00\x01\x01\x00\x00\x00\x00\x01\x01\x00\x01\x00\x00\x01\x01\x00\x02\x00\x00\x01\x00\x01\x04\x01\x01\x01\x01\x03\x02\x01\x01"))
	f.Add([]byte("bond me to a bridge over a VLAN of fabric two"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := site()
		m := machineFrom(data)
		e := Validate(n, m, nil)
		DefaultGateways(n, m)
		out, err := Render(n, m, renderOpts)
		allocated := true
		for _, i := range m.Interfaces {
			for _, l := range i.Links {
				if (l.Mode == LinkAuto || l.Mode == LinkStatic) && !l.IP.IsValid() {
					allocated = false
				}
			}
		}
		if len(e) == 0 && allocated && err != nil {
			t.Fatalf("valid machine does not render: %v\n%+v", err, m)
		}
		if err != nil {
			if _, ok := err.(FieldErrors); !ok {
				t.Fatalf("render error is not field errors: %v", err)
			}
			return
		}
		again, _ := Render(n, m, renderOpts)
		if string(again) != string(out) {
			t.Fatal("two renders differ")
		}
		for _, i := range m.Interfaces {
			if i.Enabled && !strings.Contains(string(out), "\n    "+key(i.Name)+":\n") {
				t.Fatalf("%s missing from\n%s", i.Name, out)
			}
		}
	})
}

// FuzzNextFree checks the allocation on a /27 against the rule read
// address by address: the answer is free, and no lower address is; and
// Unused holds exactly the free addresses, none of them in use.
func FuzzNextFree(f *testing.F) {
	f.Add([]byte{1, 3, 2, 9, 12, 0, 4, 5, 6})
	f.Add([]byte{0, 0, 0, 0, 31, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesIn{data}
		base := ip("192.0.2.0")
		at := func(k int) netip.Addr {
			a := base
			for ; k > 0; k-- {
				a = a.Next()
			}
			return a
		}
		s := Subnet{ID: 1, CIDR: pfx("192.0.2.0/27"), Managed: r.next()%3 != 0, Gateway: at(r.next() % 32)}
		n := &Network{Subnets: []Subnet{s}}
		for k := r.next() % 3; k > 0; k-- {
			a, b := r.next()%32, r.next()%32
			if b < a {
				a, b = b, a
			}
			n.Ranges = append(n.Ranges, IPRange{SubnetID: 1, Type: []IPRangeType{RangeDynamic, RangeReserved}[r.next()%2], Start: at(a), End: at(b)})
		}
		usedSet := map[netip.Addr]bool{}
		for k := r.next() % 12; k > 0; k-- {
			usedSet[at(r.next()%32)] = true
		}
		used := func(a netip.Addr) bool { return usedSet[a] }
		free := func(a netip.Addr) bool {
			if a == s.Gateway || used(a) || a == base || a == at(31) {
				return false
			}
			inReserved := false
			for _, rg := range n.Ranges {
				if rg.Contains(a) && (rg.Type == RangeDynamic || s.Managed) {
					return false
				}
				inReserved = inReserved || (rg.Contains(a) && rg.Type == RangeReserved)
			}
			return s.Managed || inReserved
		}
		want := netip.Addr{}
		for k := 0; k < 32; k++ {
			if free(at(k)) {
				want = at(k)
				break
			}
		}
		got, err := NextFree(n, s, used)
		if got != want || (err == nil) != want.IsValid() {
			t.Fatalf("NextFree = %v, %v; want %v (subnet %+v, ranges %+v, used %v)", got, err, want, s, n.Ranges, usedSet)
		}
		var assigned []netip.Addr
		for a := range usedSet {
			assigned = append(assigned, a)
		}
		unused := Unused(n, s, assigned)
		for k := 0; k < 32; k++ {
			_, in := spanHolding(unused, at(k))
			if in != free(at(k)) {
				t.Fatalf("%v: in Unused %v, free %v (unused %s)", at(k), in, free(at(k)), spans(unused))
			}
			if _, inUse := spanHolding(InUse(n, s, assigned), at(k)); inUse && in {
				t.Fatalf("%v both in use and unused", at(k))
			}
		}
		if err == nil && len(checkAddress(n, s, got, used)) > 0 {
			t.Fatalf("%v fails the STATIC rule: %v", got, checkAddress(n, s, got, used))
		}
	})
}
