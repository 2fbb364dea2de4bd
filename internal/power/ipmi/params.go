package ipmi

import (
	"fmt"
	"github.com/anvilmetal/anvil/internal/dnsname"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bougou/go-ipmi/pkg/types"
)

// Power parameters, with MAAS's names.
const (
	ParamAddress     = "power_address"    // host, host:port, [v6]:port; port 623 by default
	ParamUser        = "power_user"       // BMC user; empty for the anonymous (null) user
	ParamPass        = "power_pass"       // BMC password; never appears in errors
	ParamDriver      = "power_driver"     // "LAN_2_0" (lanplus, default) or "LAN" (IPMI 1.5)
	ParamBootType    = "power_boot_type"  // "auto" (default), "efi" or "legacy"
	ParamMAC         = "mac_address"      // the BMC's MAC, informational
	ParamCipherSuite = "cipher_suite_id"  // RMCP+ cipher suite; MAAS's name
	ParamCipherAlias = "cipher_suite"     // the same, shorter
	ParamPrivilege   = "privilege_level"  // "ADMIN" (default) or "OPERATOR"
	ParamKG          = "k_g"              // BMC key for two-key logins: not supported, must be empty
	ParamWorkarounds = "workaround_flags" // FreeIPMI workarounds in MAAS; accepted and ignored
)

// Driver interfaces (power_driver values).
const (
	DriverLAN20 = "LAN_2_0"
	DriverLAN15 = "LAN"
)

// DefaultPort is the RMCP port.
const DefaultPort = 623

var known = []string{ParamAddress, ParamUser, ParamPass, ParamDriver, ParamBootType, ParamMAC,
	ParamCipherSuite, ParamCipherAlias, ParamPrivilege, ParamKG, ParamWorkarounds}

// defaultCiphers are tried in order when no cipher suite is given: 17
// (HMAC-SHA256, AES) first, then 3 (HMAC-SHA1, AES), which older BMCs and
// OpenIPMI's ipmi_sim offer. Listing them skips go-ipmi's Get Channel
// Cipher Suites probe, which some BMCs (ipmi_sim) never answer, costing
// every operation its full retry budget.
var defaultCiphers = []types.CipherSuiteID{types.CipherSuiteID17, types.CipherSuiteID3}

// params are parsed power parameters.
type params struct {
	host       string // IP (canonical form) or lower-case host name, no brackets
	port       int
	user, pass string
	lan15      bool
	bootType   string // "auto", "efi" or "legacy"
	ciphers    []types.CipherSuiteID
	priv       types.PrivilegeLevel
}

// address is host:port as dialled and as the BMC's identity.
func (p params) address() string { return net.JoinHostPort(p.host, strconv.Itoa(p.port)) }

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
		sort.Strings(unknown)
		return params{}, fmt.Errorf("unknown power parameters %s (ipmi takes %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	host, port, err := parseAddress(p[ParamAddress])
	if err != nil {
		return params{}, err
	}
	out := params{host: host, port: port, user: p[ParamUser], pass: p[ParamPass], bootType: "auto", priv: types.PrivilegeLevelAdministrator}

	switch p[ParamDriver] {
	case "", DriverLAN20:
	case DriverLAN15:
		out.lan15 = true
	default:
		return params{}, fmt.Errorf("%s %q is not known: use %s (IPMI 2.0 lanplus) or %s (IPMI 1.5)", ParamDriver, p[ParamDriver], DriverLAN20, DriverLAN15)
	}
	// IPMI carries 16-byte user names, and passwords of 20 bytes in 2.0
	// and 16 in 1.5; longer ones could never authenticate.
	if len(out.user) > 16 {
		return params{}, fmt.Errorf("%s is %d bytes long; IPMI user names have at most 16", ParamUser, len(out.user))
	}
	if out.user == "" && out.pass != "" {
		// go-ipmi logs in without a user name only when the BMC allows
		// anonymous logins (null user, no password); a null user with a
		// password is refused before the BMC is even asked.
		return params{}, fmt.Errorf("%s is set but %s is empty: anonymous logins have no password", ParamPass, ParamUser)
	}
	maxPass := 20
	if out.lan15 {
		maxPass = 16
	}
	if len(out.pass) > maxPass {
		return params{}, fmt.Errorf("%s is longer than the %d bytes IPMI carries with %s=%s", ParamPass, maxPass, ParamDriver, driverName(out.lan15))
	}

	switch bt := strings.ToLower(p[ParamBootType]); bt {
	case "":
	case "auto", "efi", "legacy":
		out.bootType = bt
	default:
		return params{}, fmt.Errorf("%s must be auto, efi or legacy, not %q", ParamBootType, p[ParamBootType])
	}
	if m := p[ParamMAC]; m != "" {
		hw, err := net.ParseMAC(m)
		if err != nil || len(hw) != 6 {
			return params{}, fmt.Errorf("%s %q is not a MAC address such as 52:54:00:12:34:56", ParamMAC, m)
		}
	}
	if out.ciphers, err = parseCipher(p, out.lan15); err != nil {
		return params{}, err
	}
	switch strings.ToUpper(p[ParamPrivilege]) {
	case "", "ADMIN", "ADMINISTRATOR":
	case "OPERATOR":
		out.priv = types.PrivilegeLevelOperator
	case "USER":
		return params{}, fmt.Errorf("%s USER cannot control chassis power; use OPERATOR or ADMIN", ParamPrivilege)
	default:
		return params{}, fmt.Errorf("%s must be ADMIN or OPERATOR, not %q", ParamPrivilege, p[ParamPrivilege])
	}
	if p[ParamKG] != "" {
		// go-ipmi's client has no way to set the BMC key, so a two-key
		// login would fail with a misleading authentication error.
		return params{}, fmt.Errorf("%s (a BMC key for two-key logins) is not supported by the ipmi driver; leave it empty", ParamKG)
	}
	return out, nil
}

func driverName(lan15 bool) string {
	if lan15 {
		return DriverLAN15
	}
	return DriverLAN20
}

func parseCipher(p map[string]string, lan15 bool) ([]types.CipherSuiteID, error) {
	v, alias := strings.TrimSpace(p[ParamCipherSuite]), strings.TrimSpace(p[ParamCipherAlias])
	if v != "" && alias != "" && v != alias {
		return nil, fmt.Errorf("%s %q and %s %q disagree; give one", ParamCipherSuite, v, ParamCipherAlias, alias)
	}
	if v == "" {
		v = alias
	}
	if v == "" {
		if lan15 {
			return nil, nil
		}
		return defaultCiphers, nil
	}
	if lan15 {
		return nil, fmt.Errorf("%s applies to %s=%s only; IPMI 1.5 has no cipher suites", ParamCipherSuite, ParamDriver, DriverLAN20)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 255 {
		return nil, fmt.Errorf("%s must be a cipher suite number such as 17 or 3, not %q", ParamCipherSuite, v)
	}
	id := types.CipherSuiteID(n)
	if n == 0 {
		return nil, fmt.Errorf("%s 0 does no authentication at all; use 17 or 3", ParamCipherSuite)
	}
	if _, _, _, ok := types.GetCipherSuiteAlgorithms(id); !ok {
		return nil, fmt.Errorf("%s %d is not a standard cipher suite (1 to 19 are)", ParamCipherSuite, n)
	}
	return []types.CipherSuiteID{id}, nil
}

// parseAddress accepts host, host:port, a bare IPv6 address, [v6] and
// [v6]:port.
func parseAddress(s string) (string, int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, fmt.Errorf("%s is required", ParamAddress)
	}
	if strings.Contains(s, "/") {
		return "", 0, fmt.Errorf("%s %q must be a host or host:port, not a URL or path", ParamAddress, s)
	}
	host, portStr := s, ""
	switch {
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		host = s[1 : len(s)-1]
	case strings.HasPrefix(s, "["), strings.Count(s, ":") == 1:
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return "", 0, fmt.Errorf("%s %q is not host:port or [v6]:port", ParamAddress, s)
		}
		host, portStr = h, p
	}
	port := DefaultPort
	if portStr != "" {
		n, err := strconv.Atoi(portStr)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("%s %q has a bad port %q", ParamAddress, s, portStr)
		}
		port = n
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.String(), port, nil
	}
	if strings.Contains(host, ":") || strings.HasPrefix(s, "[") {
		return "", 0, fmt.Errorf("%s %q is not a valid IPv6 address", ParamAddress, s)
	}
	if !dnsname.ValidLoose(host) {
		return "", 0, fmt.Errorf("%s %q is neither an IP address nor a host name", ParamAddress, s)
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), port, nil
}
