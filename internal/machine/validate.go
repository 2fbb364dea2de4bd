package machine

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// NormaliseMAC returns a 48-bit MAC in lower-case colon form, accepting the
// spellings operators paste (colons, dashes, dots, bare hex).
func NormaliseMAC(v string) (string, error) {
	s := strings.TrimSpace(v)
	if len(s) == 12 && !strings.ContainsAny(s, ":-.") {
		var b strings.Builder
		for i := 0; i < 12; i += 2 {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(s[i : i+2])
		}
		s = b.String()
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%q is not a valid MAC address", v)
	}
	return hw.String(), nil
}

var hostnameLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidateHostname checks a hostname as MAAS does: DNS labels of letters,
// digits and hyphens, at most 63 characters each and 255 in all.
func ValidateHostname(h string) error {
	if h == "" || len(h) > 255 {
		return fmt.Errorf("hostname %q must be 1 to 255 characters", h)
	}
	for _, label := range strings.Split(h, ".") {
		if !hostnameLabel.MatchString(strings.ToLower(label)) {
			return fmt.Errorf("hostname %q is not valid: each label is letters, digits and hyphens, not starting or ending with a hyphen", h)
		}
	}
	return nil
}

// architectures are the ones Anvil can boot, in MAAS's arch/subarch form.
var architectures = map[string]bool{
	"amd64/generic": true, "arm64/generic": true, "i386/generic": true,
	"ppc64el/generic": true, "s390x/generic": true, "riscv64/generic": true,
}

// NormaliseArchitecture accepts "amd64" or "amd64/generic" and returns the
// full form; an architecture Anvil does not know is an error.
func NormaliseArchitecture(a string) (string, error) {
	if a != "" && !strings.Contains(a, "/") {
		a += "/generic"
	}
	if !architectures[a] {
		return "", fmt.Errorf("architecture %q is not supported (one of amd64, arm64, i386, ppc64el, s390x, riscv64, optionally with /generic)", a)
	}
	return a, nil
}

// secretParams are the power parameters that are secrets: stored encrypted,
// never logged, never shown to non-admins.
var secretParams = map[string]bool{
	"power_pass": true, "power_password": true, "password": true,
	"power_token": true, "token": true, "secret": true, "power_key": true,
	"k_g": true, "power_k_g": true, // IPMI's BMC key
}

// IsSecretParam reports whether a power parameter holds a secret.
func IsSecretParam(name string) bool {
	n := strings.ToLower(name)
	return secretParams[n] || strings.Contains(n, "pass") || strings.Contains(n, "secret") || strings.Contains(n, "token")
}

// MaxDescription is the longest description a machine takes, however it
// is set (create, update, the pages).
const MaxDescription = 1024

// ValidateDescription checks a machine's description.
func ValidateDescription(d string) error {
	if len(d) > MaxDescription {
		return fmt.Errorf("must be at most %d characters (got %d)", MaxDescription, len(d))
	}
	return nil
}
