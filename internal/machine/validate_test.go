package machine

import (
	"regexp"
	"strings"
	"testing"
)

func TestNormaliseMAC(t *testing.T) {
	const want = "52:54:00:ab:cd:ef"
	valid := []struct{ in, want string }{
		{"52:54:00:ab:cd:ef", want},
		{"52:54:00:AB:CD:EF", want},     // upper case
		{"52-54-00-ab-cd-ef", want},     // dashes (Windows)
		{"52-54-00-AB-CD-EF", want},     // dashes, upper case
		{"525400abcdef", want},          // bare hex
		{"525400ABCDEF", want},          // bare hex, upper case
		{"5254.00ab.cdef", want},        // dotted (Cisco)
		{"  52:54:00:ab:cd:ef\n", want}, // pasted with whitespace
		{"\t525400abcdef ", want},
		{"00:00:00:00:00:00", "00:00:00:00:00:00"},
		{"FF:FF:FF:FF:FF:FF", "ff:ff:ff:ff:ff:ff"},
	}
	for _, tc := range valid {
		got, err := NormaliseMAC(tc.in)
		if err != nil {
			t.Errorf("NormaliseMAC(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("NormaliseMAC(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	invalid := []string{
		"", "   ",
		"02:00:5e:10:00:00:00:01", // EUI-64: 8 bytes
		"02-00-5e-10-00-00-00-01", // EUI-64, dashes
		"0200.5e10.0000.0001",     // EUI-64, dotted
		"02005e1000000001",        // EUI-64, bare
		"00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01", // IPoIB: 20 bytes
		"garbage", "zz:zz:zz:zz:zz:zz", "not a mac at all",
		"52:54:00:ab:cd",     // 5 bytes
		"52:54:00:ab:cd:ef:", // trailing separator
		":52:54:00:ab:cd:ef", // leading separator
		"525400abcde",        // 11 hex digits
		"525400abcdefa",      // 13 hex digits
		"525400abcdeg",       // bare, not hex
		"52:54:00-ab-cd-ef",  // mixed separators
		"5:54:0:ab:cd:ef",    // short groups
		"52 54 00 ab cd ef",  // spaces
		"0x525400abcdef",     // C literal
		"52:54:00:ab:cd:éf",  // not ASCII
		"52545é00abcd",       // 12 bytes, not ASCII
	}
	for _, in := range invalid {
		got, err := NormaliseMAC(in)
		if err == nil {
			t.Errorf("NormaliseMAC(%q) = %q, want an error", in, got)
			continue
		}
		if got != "" {
			t.Errorf("NormaliseMAC(%q) returned %q with its error", in, got)
		}
		if !strings.Contains(err.Error(), "not a valid MAC address") {
			t.Errorf("NormaliseMAC(%q) error %q", in, err)
		}
	}
}

var normalMAC = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

func FuzzNormaliseMAC(f *testing.F) {
	for _, seed := range []string{
		"52:54:00:ab:cd:ef", "52-54-00-AB-CD-EF", "525400abcdef", "5254.00ab.cdef",
		"02:00:5e:10:00:00:00:01", "", "garbage", " 525400ABCDEF\t", "52545é00abcd",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormaliseMAC(in)
		if err != nil {
			if out != "" {
				t.Fatalf("NormaliseMAC(%q) returned %q with error %v", in, out, err)
			}
			return
		}
		if !normalMAC.MatchString(out) {
			t.Fatalf("NormaliseMAC(%q) = %q, not lower-case colon form", in, out)
		}
		again, err := NormaliseMAC(out)
		if err != nil || again != out {
			t.Fatalf("NormaliseMAC(%q) = %q, which re-normalises to %q, %v", in, out, again, err)
		}
	})
}

func TestValidateHostname(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name255 := strings.Join([]string{label63, label63, label63, label63}, ".") // 4×63 + 3 dots
	if len(name255) != 255 {
		t.Fatalf("test setup: %d", len(name255))
	}
	valid := []string{
		"a", "1", "node-01", "node01", "123", "a-b-c", "Node-01", "NODE",
		"node01.maas", "a.b.c.d", "xn--bcher-kva", label63, name255,
	}
	for _, h := range valid {
		if err := ValidateHostname(h); err != nil {
			t.Errorf("ValidateHostname(%q): %v", h, err)
		}
	}
	invalid := []string{
		"",
		"-node", "node-", "-",
		"no_de", "node 01", "node\t", "nöde", "node!", "node/1", "node:80",
		"node..maas", ".node", "node.", ".",
		strings.Repeat("a", 64),                 // label too long
		label63 + "." + strings.Repeat("b", 64), // second label too long
		name255 + "a",                           // 256 characters
		name255 + ".a",                          // 257, every label fine
		strings.Repeat("a.", 127) + "ab",        // 256 characters of short labels
	}
	for _, h := range invalid {
		if err := ValidateHostname(h); err == nil {
			t.Errorf("ValidateHostname(%q) = nil, want an error", h)
		}
	}
}

func TestNormaliseArchitecture(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64", "i386", "ppc64el", "s390x", "riscv64"} {
		for _, in := range []string{arch, arch + "/generic"} {
			got, err := NormaliseArchitecture(in)
			if err != nil || got != arch+"/generic" {
				t.Errorf("NormaliseArchitecture(%q) = %q, %v; want %q", in, got, err, arch+"/generic")
			}
		}
	}
	for _, in := range []string{
		"", "/", "/generic", "amd64/", "generic",
		"x86_64", "aarch64", "armhf", "sparc", "AMD64", "Amd64/generic",
		"amd64/hwe-22.04", "arm64/xgene-uboot", // sub-architectures Anvil does not boot
		"amd64/generic/extra", " amd64",
	} {
		got, err := NormaliseArchitecture(in)
		if err == nil {
			t.Errorf("NormaliseArchitecture(%q) = %q, want an error", in, got)
			continue
		}
		if got != "" || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("NormaliseArchitecture(%q) = %q, %v", in, got, err)
		}
	}
}

func TestIsSecretParam(t *testing.T) {
	secret := []string{
		"power_pass", "power_password", "password", "power_token", "token", "secret", "power_key",
		"POWER_PASS", "Power_Password", "TOKEN", // any case
		"passphrase", "bmc_pass", "client_secret", "api_token", "power_token_secret", // by substring
	}
	for _, p := range secret {
		if !IsSecretParam(p) {
			t.Errorf("IsSecretParam(%q) = false, want true", p)
		}
	}
	plain := []string{
		"", "power_address", "power_user", "power_driver", "power_id", "power_port",
		"power_hostname", "power_uuid", "power_vm_name", "privilege_level", "mac_address",
		"power_boot_type", "power_verify_ssl", "cipher_suite_id",
	}
	for _, p := range plain {
		if IsSecretParam(p) {
			t.Errorf("IsSecretParam(%q) = true, want false", p)
		}
	}
}

func TestFQDN(t *testing.T) {
	for _, tc := range []struct{ host, domain, want string }{
		{"node-01", "maas", "node-01.maas"},
		{"node-01", "dc1.example.com", "node-01.dc1.example.com"},
		{"node-01", "", "node-01"},
	} {
		m := Machine{Hostname: tc.host, Domain: tc.domain}
		if got := m.FQDN(); got != tc.want {
			t.Errorf("FQDN(%q, %q) = %q, want %q", tc.host, tc.domain, got, tc.want)
		}
	}
}

func TestBootInterface(t *testing.T) {
	eno1 := Interface{ID: 1, Name: "eno1", MAC: "52:54:00:00:00:01"}
	eno2 := Interface{ID: 2, Name: "eno2", MAC: "52:54:00:00:00:02"}
	boot2 := eno2
	boot2.Boot = true
	for _, tc := range []struct {
		name   string
		ifaces []Interface
		want   Interface
		ok     bool
	}{
		{"marked", []Interface{eno1, boot2}, boot2, true},
		{"first when none marked", []Interface{eno1, eno2}, eno1, true},
		{"none", nil, Interface{}, false},
	} {
		m := Machine{Interfaces: tc.ifaces}
		got, ok := m.BootInterface()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: BootInterface() = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// Clone is what keeps a Step from aliasing its input.
func TestCloneIsDeep(t *testing.T) {
	m := fixture(Deployed)
	snapshot := deepCopy(m)
	c := m.Clone()
	c.Interfaces[0].MAC = "ff:ff:ff:ff:ff:ff"
	c.Interfaces = append(c.Interfaces, Interface{Name: "new"})
	c.Tags[0] = "scribbled"
	c.PowerParams["power_pass"] = "scribbled"
	delete(c.PowerParams, "power_user")
	if m.Interfaces[0] != snapshot.Interfaces[0] || len(m.Interfaces) != 2 ||
		m.Tags[0] != snapshot.Tags[0] || m.PowerParams["power_pass"] != "s3cret" || m.PowerParams["power_user"] != "root" {
		t.Errorf("Clone shares memory with the original")
	}
}
