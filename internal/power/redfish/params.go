package redfish

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Power parameters, with MAAS's names where MAAS has them.
const (
	ParamAddress   = "power_address"    // host, host:port or http(s):// URL; https by default
	ParamUser      = "power_user"       // BMC user; empty for a service without authentication
	ParamPass      = "power_pass"       // BMC password
	ParamNodeID    = "node_id"          // system Id or @odata.id; needed when the service has several
	ParamVerifyTLS = "power_verify_tls" // "true" (default) or "false" to accept any certificate
	ParamBootType  = "power_boot_type"  // "auto" (default), "efi" or "legacy"
)

var known = []string{ParamAddress, ParamUser, ParamPass, ParamNodeID, ParamVerifyTLS, ParamBootType}

// params are parsed power parameters.
type params struct {
	endpoint   string // scheme://host:port, what gofish is given
	user, pass string
	nodeID     string
	verify     bool
	bootType   string
}

// parse checks and normalises power parameters. Its errors never contain
// the password.
func parse(p map[string]string) (params, error) {
	var unknown []string
	for k := range p {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		// Catch typos such as webhook's power_verify_ssl, which would
		// otherwise be silently ignored.
		sort.Strings(unknown)
		return params{}, fmt.Errorf("unknown power parameters %s (redfish takes %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	endpoint, err := parseAddress(p[ParamAddress])
	if err != nil {
		return params{}, err
	}
	out := params{
		endpoint: endpoint, user: p[ParamUser], pass: p[ParamPass],
		nodeID: strings.TrimRight(strings.TrimSpace(p[ParamNodeID]), "/"), verify: true, bootType: "auto",
	}
	if out.user == "" && out.pass != "" {
		return params{}, fmt.Errorf("%s is set but %s is empty", ParamPass, ParamUser)
	}
	if v := p[ParamVerifyTLS]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return params{}, fmt.Errorf("%s must be true or false, not %q", ParamVerifyTLS, v)
		}
		out.verify = b
	}
	switch bt := strings.ToLower(p[ParamBootType]); bt {
	case "":
	case "auto", "efi", "legacy":
		out.bootType = bt
	default:
		return params{}, fmt.Errorf("%s must be auto, efi or legacy, not %q", ParamBootType, p[ParamBootType])
	}
	return out, nil
}

// parseAddress turns power_address into scheme://host:port. A path is
// allowed only if it is the service root, since gofish appends the
// /redfish/v1 paths itself.
func parseAddress(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", fmt.Errorf("%s is required", ParamAddress)
	}
	if !strings.Contains(addr, "://") {
		if ip := net.ParseIP(addr); ip != nil && ip.To4() == nil {
			addr = "[" + addr + "]" // a bare IPv6 address
		}
		addr = "https://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("%s: %v", ParamAddress, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("%s: scheme must be https or http, not %q", ParamAddress, u.Scheme)
	}
	if u.User != nil {
		// Credentials in the URL would end up in logs and error messages.
		return "", fmt.Errorf("%s must not contain credentials; use %s and %s", ParamAddress, ParamUser, ParamPass)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("%s has no host", ParamAddress)
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" && p != "/redfish/v1" && p != "/redfish" {
		return "", fmt.Errorf("%s: path %q is not the Redfish service root", ParamAddress, u.Path)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s must not have a query or fragment", ParamAddress)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("%s: bad port %q", ParamAddress, port)
	}
	return u.Scheme + "://" + net.JoinHostPort(u.Hostname(), port), nil
}
