package network

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func spans(ss []Span) string {
	var b []string
	for _, s := range ss {
		b = append(b, fmt.Sprintf("%s-%s%v", s.Start, s.End, s.Purposes))
	}
	return strings.Join(b, " ")
}

func TestUsage(t *testing.T) {
	n := site()
	s1, _ := n.Subnet(1)
	gwInDynamic := s1
	gwInDynamic.Gateway = ip("192.0.2.150")
	v6, _ := n.Subnet(3)
	unmanaged := s1
	unmanaged.Managed = false
	cases := []struct {
		name          string
		s             Subnet
		assigned      []netip.Addr
		inUse, unused string
	}{
		{"managed IPv4", s1, []netip.Addr{ip("192.0.2.10"), ip("198.51.100.3")},
			"192.0.2.1-192.0.2.1[gateway-ip] 192.0.2.2-192.0.2.9[reserved] 192.0.2.10-192.0.2.10[assigned-ip] 192.0.2.53-192.0.2.53[dns-server] 192.0.2.100-192.0.2.199[dynamic]",
			"192.0.2.11-192.0.2.52[unused] 192.0.2.54-192.0.2.99[unused] 192.0.2.200-192.0.2.254[unused]"},
		{"gateway inside the dynamic range", gwInDynamic, nil,
			"192.0.2.2-192.0.2.9[reserved] 192.0.2.53-192.0.2.53[dns-server] 192.0.2.100-192.0.2.199[dynamic gateway-ip]",
			"192.0.2.1-192.0.2.1[unused] 192.0.2.10-192.0.2.52[unused] 192.0.2.54-192.0.2.99[unused] 192.0.2.200-192.0.2.254[unused]"},
		{"IPv6 /64", v6, nil,
			"2001:db8::-2001:db8::[rfc-4291-2.6.1] 2001:db8::1-2001:db8::ffff:ffff[dns-server gateway-ip reserved]",
			"2001:db8::1:0:0-2001:db8::ffff:ffff:ffff:ffff[unused]"},
		{"unmanaged: free only in reserved ranges", unmanaged, []netip.Addr{ip("192.0.2.4")},
			"192.0.2.1-192.0.2.1[gateway-ip] 192.0.2.4-192.0.2.4[assigned-ip] 192.0.2.53-192.0.2.53[dns-server] 192.0.2.100-192.0.2.199[dynamic]",
			"192.0.2.2-192.0.2.3[unused] 192.0.2.5-192.0.2.9[unused]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := spans(InUse(n, c.s, c.assigned)); got != c.inUse {
				t.Errorf("in use:\n got %s\nwant %s", got, c.inUse)
			}
			if got := spans(Unused(n, c.s, c.assigned)); got != c.unused {
				t.Errorf("unused:\n got %s\nwant %s", got, c.unused)
			}
		})
	}
	free := Unused(n, v6, nil)[0].Size()
	if want := "18446744069414584320"; free.String() != want { // 2^64 - 2^32
		t.Errorf("IPv6 /64 free addresses %s, want %s", free, want)
	}
}
