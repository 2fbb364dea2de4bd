package machine

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// defaultBMCPorts are the ports a BMC address without one means.
var defaultBMCPorts = map[string]int{"ipmi": 623, "redfish": 443}

// BMCIdentity is the canonical "type|host|port|system" of a BMC, so that
// one BMC written several ways ("LOCALHOST.:623", "127.0.0.1",
// "[::ffff:127.0.0.1]:623", "https://bmc/" and "bmc:443") has one
// identity and the one-BMC-one-machine rule cannot be sidestepped by
// spelling. address is "host", "host:port", "[v6]:port" or a URL; resolve
// turns a host name into an address ("" when it cannot), and is the only
// I/O, left to the caller. An empty address has no identity.
func BMCIdentity(typ, address, system string, resolve func(host string) string) string {
	if address == "" {
		return ""
	}
	host, port := splitBMCAddress(address)
	if port == 0 {
		port = defaultBMCPorts[typ]
	}
	host = canonicalHost(host)
	if _, err := netip.ParseAddr(host); err != nil && resolve != nil && host != "" {
		if a := canonicalHost(resolve(host)); a != "" {
			host = a
		}
	}
	p := ""
	if port != 0 {
		p = strconv.Itoa(port)
	}
	return strings.Join([]string{typ, host, p, system}, "|")
}

// splitBMCAddress returns the host and port (0: none given) of address.
func splitBMCAddress(address string) (string, int) {
	if strings.Contains(address, "://") {
		u, err := url.Parse(address)
		if err != nil {
			return address, 0
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"https": 443, "http": 80}[strings.ToLower(u.Scheme)]
		}
		return u.Hostname(), port
	}
	if h, p, err := net.SplitHostPort(address); err == nil {
		port, _ := strconv.Atoi(p)
		return h, port
	}
	return address, 0
}

// canonicalHost lower-cases a host, drops brackets and trailing dots, and
// writes an address in its one canonical form (IPv4-mapped IPv6 as IPv4).
func canonicalHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
	h = strings.ToLower(strings.TrimRight(h, "."))
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return h
}

// DescribeBMC says in words what a BMC identity names: "IPMI at
// 127.0.0.1, port 47950" or "Redfish at bmc-7, port 443, system 1".
// An empty identity (manual power) is "".
func DescribeBMC(identity string) string {
	parts := strings.Split(identity, "|")
	if identity == "" || len(parts) != 4 {
		return identity
	}
	typ := map[string]string{"ipmi": "IPMI", "redfish": "Redfish", "webhook": "webhook"}[parts[0]]
	if typ == "" {
		typ = parts[0]
	}
	out := typ + " at " + parts[1]
	if parts[2] != "" {
		out += ", port " + parts[2]
	}
	if parts[3] != "" {
		out += ", system " + parts[3]
	}
	return out
}
