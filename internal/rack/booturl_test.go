package rack

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestBootURL(t *testing.T) {
	tcp := func(s string) net.Addr {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	br0 := netip.MustParseAddr("192.0.2.1")
	one := []netip.Addr{netip.MustParseAddr("198.51.100.7")}
	two := append(one, netip.MustParseAddr("198.18.0.1"))
	for _, c := range []struct {
		name string
		site bootSite
		want string
		warn bool
		flag string // the flag a refusal names; "" when accepted
	}{
		{name: "explicit", site: bootSite{explicit: "http://192.0.2.1:5248/", bound: tcp("[::]:5248")}, want: "http://192.0.2.1:5248"},
		{name: "explicit IPv6", site: bootSite{explicit: "http://[2001:db8::1]:5248"}, want: "http://[2001:db8::1]:5248"},
		{name: "explicit unspecified", site: bootSite{explicit: "http://[::]:5248"}, flag: "--boot-http-url"},
		{name: "explicit 0.0.0.0", site: bootSite{explicit: "http://0.0.0.0:5248", dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, flag: "--boot-http-url"},
		{name: "explicit not a URL", site: bootSite{explicit: "192.0.2.1:5248"}, flag: "--boot-http-url"},
		{name: "explicit loopback, DHCP on br0", site: bootSite{explicit: "http://127.0.0.1:5248", dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, flag: "--boot-http-url"},
		{name: "explicit loopback, no DHCP", site: bootSite{explicit: "http://127.0.0.1:5248"}, want: "http://127.0.0.1:5248"},
		{name: "no HTTP boot", site: bootSite{dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}},
		{name: "listener names an address", site: bootSite{bound: tcp("192.0.2.1:5248"), dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, want: "http://192.0.2.1:5248"},
		{name: "listener on every address, DHCP on br0", site: bootSite{bound: tcp("[::]:5248"), dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, want: "http://192.0.2.1:5248"},
		{name: "listener on every address, other port", site: bootSite{bound: tcp("0.0.0.0:8080"), dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, want: "http://192.0.2.1:8080"},
		{name: "DHCP interface without IPv4", site: bootSite{bound: tcp("[::]:5248"), dhcpIface: "br0", dhcpReal: true}, flag: "--boot-http-url"},
		{name: "loopback listener, DHCP on br0", site: bootSite{bound: tcp("127.0.0.1:5248"), dhcpIface: "br0", dhcpReal: true, dhcpAddr: br0}, flag: "--boot-http-listen"},
		{name: "loopback listener, DHCP on lo", site: bootSite{bound: tcp("127.0.0.1:5248"), dhcpIface: "lo", dhcpAddr: netip.MustParseAddr("127.0.0.1")}, want: "http://127.0.0.1:5248"},
		{name: "loopback listener, no DHCP", site: bootSite{bound: tcp("127.0.0.1:5248")}, want: "http://127.0.0.1:5248"},
		{name: "no DHCP, one host address", site: bootSite{bound: tcp("[::]:5248"), hostAddrs: one}, want: "http://198.51.100.7:5248"},
		{name: "no DHCP, two host addresses", site: bootSite{bound: tcp("[::]:5248"), hostAddrs: two}, want: "http://198.51.100.7:5248", warn: true},
		{name: "no DHCP, no host address", site: bootSite{bound: tcp("[::]:5248")}, want: "http://127.0.0.1:5248", warn: true},
	} {
		got, warn, err := bootURL(c.site)
		var ue *UnreachableError
		switch {
		case c.flag != "":
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "set "+c.flag) {
				t.Errorf("%s: %q, %v; want a refusal naming %s", c.name, got, err, c.flag)
			}
		case err != nil || got != c.want || (warn != "") != c.warn:
			t.Errorf("%s: %q, warn %q, %v; want %q (warning %v)", c.name, got, warn, err, c.want, c.warn)
		case c.warn && !strings.Contains(warn, "--boot-http-url"):
			t.Errorf("%s: warning %q does not name --boot-http-url", c.name, warn)
		}
	}
}
