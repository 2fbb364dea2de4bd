package dnszone

import (
	"fmt"
	"net/netip"
	"testing"
)

// BenchmarkBuild10000 builds the zones of 10,000 machines with two
// addresses each, as a rack does on every change.
func BenchmarkBuild10000(b *testing.B) {
	in := Input{Domains: []Domain{{Name: "maas", Authoritative: true}},
		Subnets: []Subnet{{CIDR: netip.MustParsePrefix("198.18.0.0/15"), RDNS: RDNSEnabled}}}
	for i := range 10000 {
		in.Hosts = append(in.Hosts, Host{Name: fmt.Sprintf("node%05d", i), Domain: "maas", Addrs: []HostAddr{
			{Iface: "eth0", Boot: true, IP: netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})},
			{Iface: "eth1", IP: netip.AddrFrom4([4]byte{198, 19, byte(i >> 8), byte(i)})}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		Build(in)
	}
}
