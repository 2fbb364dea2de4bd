package rack

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// UnreachableError is a URL handed to booting machines that none of them
// could reach; Flag names what the operator sets instead. Start fails with
// it: a rack serving such a URL answers every boot with a config the
// firmware cannot follow ("Network unreachable"), which is worse than not
// starting.
type UnreachableError struct {
	What           string // "boot URL", "metadata URL"
	URL, Why, Flag string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s %s: %s; set %s", e.What, e.URL, e.Why, e.Flag)
}

// bootSite is what the boot URL is derived from.
type bootSite struct {
	explicit string   // --boot-http-url
	bound    net.Addr // the HTTP boot listener
	// dhcpIface is the interface DHCP is served on ("" for none);
	// dhcpReal says it is not a loopback interface, and dhcpAddr is
	// this rack's IPv4 address there (zero when it has none).
	dhcpIface string
	dhcpReal  bool
	dhcpAddr  netip.Addr
	// hostAddrs are this host's non-loopback IPv4 addresses, the guess
	// when nothing else says where machines reach the rack.
	hostAddrs []netip.Addr
}

// bootURL decides the boot HTTP server's URL as machines reach it: the
// one the operator gave, else the listener's address when it names one,
// else this rack's address on the DHCP interface. warn is set when the
// URL is a guess (no DHCP here and a listener on every address).
func bootURL(s bootSite) (u, warn string, err error) {
	unreachable := func(host string) string {
		ip, _ := netip.ParseAddr(strings.Trim(host, "[]"))
		switch {
		case host == "" || ip.IsUnspecified():
			return "the address " + cmp.Or(host, "(none)") + " names no host a machine can reach"
		case ip.IsLoopback() && s.dhcpReal:
			return "a loopback address, while DHCP is served on " + s.dhcpIface + " to other machines"
		}
		return ""
	}
	if s.explicit != "" {
		p, perr := url.Parse(s.explicit)
		if perr != nil || (p.Scheme != "http" && p.Scheme != "https") {
			return "", "", &UnreachableError{What: "boot URL", URL: s.explicit, Why: "not an http:// URL", Flag: "--boot-http-url to the boot server as machines reach it, e.g. http://192.0.2.1:5248"}
		}
		if why := unreachable(p.Hostname()); why != "" {
			return "", "", &UnreachableError{What: "boot URL", URL: s.explicit, Why: why, Flag: "--boot-http-url to an address machines reach, e.g. http://192.0.2.1:5248"}
		}
		return strings.TrimSuffix(s.explicit, "/"), "", nil
	}
	if s.bound == nil {
		return "", "", nil
	}
	host, port, _ := net.SplitHostPort(s.bound.String())
	ip, perr := netip.ParseAddr(host)
	switch {
	case perr == nil && !ip.IsUnspecified():
		u = "http://" + s.bound.String()
		if why := unreachable(host); why != "" {
			return "", "", &UnreachableError{What: "boot URL", URL: u, Why: why, Flag: "--boot-http-listen to an address on " + s.dhcpIface + ", or --boot-http-url"}
		}
		return u, "", nil
	case s.dhcpIface != "":
		if !s.dhcpAddr.IsValid() {
			return "", "", &UnreachableError{What: "boot URL", URL: "http://" + s.bound.String(), Why: "interface " + s.dhcpIface + " has no IPv4 address to derive it from",
				Flag: "--boot-http-url, e.g. http://192.0.2.1:" + port}
		}
		return "http://" + net.JoinHostPort(s.dhcpAddr.String(), port), "", nil
	}
	// No DHCP here: the site's own DHCP points machines at this host,
	// and only the operator knows at which of its addresses.
	guess := netip.MustParseAddr("127.0.0.1")
	if len(s.hostAddrs) > 0 {
		guess = s.hostAddrs[0]
	}
	u = "http://" + net.JoinHostPort(guess.String(), port)
	if len(s.hostAddrs) != 1 {
		warn = fmt.Sprintf("boot URL %s is a guess (this host has %d addresses and no DHCP is served here); set --boot-http-url", u, len(s.hostAddrs))
	}
	return u, warn, nil
}

// ifaceIPv4 is the first IPv4 address of interface name and whether the
// interface is a real one (not loopback).
func ifaceIPv4(name string) (netip.Addr, bool, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("dhcp interface %s: %w", name, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, false, fmt.Errorf("dhcp interface %s: %w", name, err)
	}
	real := ifi.Flags&net.FlagLoopback == 0
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if v, ok := netip.AddrFromSlice(ipn.IP.To4()); ok {
				return v, real, nil
			}
		}
	}
	return netip.Addr{}, real, nil
}

// hostIPv4 lists this host's IPv4 addresses that are not loopback.
func hostIPv4() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if ipn, ok := a.(*net.IPNet); ok {
			if v, ok := netip.AddrFromSlice(ipn.IP.To4()); ok && !v.IsLoopback() && !v.IsLinkLocalUnicast() {
				out = append(out, v)
			}
		}
	}
	return out
}
