package ipmi

import (
	"strings"
	"testing"

	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/anvilmetal/anvil/internal/power"
)

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5":            "10.0.0.5:623",
		" 10.0.0.5:6230 ":     "10.0.0.5:6230",
		"BMC-7.Example.com":   "bmc-7.example.com:623",
		"bmc7.example.com.":   "bmc7.example.com:623",
		"bmc7:624":            "bmc7:624",
		"fd00::1":             "[fd00::1]:623",
		"FD00:0:0::1":         "[fd00::1]:623",
		"[fd00::1]":           "[fd00::1]:623",
		"[fd00::1]:6230":      "[fd00::1]:6230",
		"[fe80::1%eth0]:6230": "[fe80::1%eth0]:6230",
	} {
		p, err := parse(map[string]string{ParamAddress: in})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := p.address(); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"", "  ", "10.0.0.5:0", "10.0.0.5:70000", "10.0.0.5:x", "https://10.0.0.5", "bmc 7",
		"-bmc", "fd00::1::2", "[fd00::1", "[bmc]:623", "a..b"} {
		if _, err := parse(map[string]string{ParamAddress: in}); err == nil {
			t.Errorf("%q was accepted", in)
		}
	}
}

func TestBMCIdentity(t *testing.T) {
	b, err := Driver{}.BMC(map[string]string{ParamAddress: "[FD00::1]", ParamUser: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if b != (power.BMC{Type: "ipmi", Address: "[fd00::1]:623"}) || b.Key() != "ipmi://[fd00::1]:623" {
		t.Fatalf("got %+v", b)
	}
	if _, err := (Driver{}).BMC(map[string]string{}); power.Classify(err) != power.BadParams {
		t.Fatalf("missing address: %v", err)
	}
}

func TestParseDefaultsAndOptions(t *testing.T) {
	p, err := parse(map[string]string{ParamAddress: "bmc", ParamUser: "", ParamPass: ""})
	if err != nil {
		t.Fatal(err)
	}
	if p.lan15 || p.bootType != "auto" || p.priv != types.PrivilegeLevelAdministrator || len(p.ciphers) != 2 || p.ciphers[0] != 17 || p.ciphers[1] != 3 {
		t.Fatalf("defaults: %+v", p)
	}
	p, err = parse(map[string]string{
		ParamAddress: "bmc", ParamUser: "admin", ParamPass: "pw", ParamDriver: "LAN", ParamBootType: "EFI",
		ParamMAC: "52:54:00:AB:cd:01", ParamPrivilege: "operator", ParamWorkarounds: "opensesspriv", ParamKG: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !p.lan15 || p.bootType != "efi" || p.priv != types.PrivilegeLevelOperator || p.ciphers != nil {
		t.Fatalf("options: %+v", p)
	}
	for _, c := range []map[string]string{{ParamCipherSuite: "3"}, {ParamCipherAlias: "3"}, {ParamCipherSuite: "3", ParamCipherAlias: "3"}} {
		c[ParamAddress] = "bmc"
		p, err := parse(c)
		if err != nil || len(p.ciphers) != 1 || p.ciphers[0] != 3 {
			t.Fatalf("%v: %+v %v", c, p, err)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	const secret = "Hunter2-Secret"
	for name, extra := range map[string]map[string]string{
		"unknown parameter":     {"power_adress": "x"},
		"unknown driver":        {ParamDriver: "LANPLUS"},
		"boot type":             {ParamBootType: "uefi"},
		"mac":                   {ParamMAC: "52:54:00"},
		"cipher not a number":   {ParamCipherSuite: "seventeen"},
		"cipher 0":              {ParamCipherSuite: "0"},
		"cipher unknown":        {ParamCipherSuite: "42"},
		"ciphers disagree":      {ParamCipherSuite: "17", ParamCipherAlias: "3"},
		"cipher with LAN":       {ParamDriver: "LAN", ParamCipherSuite: "3"},
		"privilege USER":        {ParamPrivilege: "USER"},
		"privilege unknown":     {ParamPrivilege: "ROOT"},
		"k_g":                   {ParamKG: "0x0102"},
		"user too long":         {ParamUser: strings.Repeat("u", 17)},
		"password too long":     {ParamPass: secret + strings.Repeat("x", 20)},
		"1.5 password too long": {ParamDriver: "LAN", ParamPass: secret + "xyz"},
		"password without user": {ParamUser: ""},
	} {
		p := map[string]string{ParamAddress: "10.0.0.5", ParamUser: "admin", ParamPass: secret}
		for k, v := range extra {
			p[k] = v
		}
		err := Driver{}.Validate(p)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
	if err := (Driver{}).Validate(map[string]string{ParamAddress: "bmc"}); err != nil {
		t.Errorf("anonymous login refused: %v", err)
	}
}

// Operations check parameters before touching the network.
func TestOperationsRejectBadParams(t *testing.T) {
	d := Driver{}
	bad := map[string]string{ParamAddress: ""}
	if err := d.PowerOn(t.Context(), bad); power.Classify(err) != power.BadParams {
		t.Fatalf("power on: %v", err)
	}
	if _, err := d.Query(t.Context(), bad); power.Classify(err) != power.BadParams {
		t.Fatalf("query: %v", err)
	}
	good := map[string]string{ParamAddress: "127.0.0.1:1"}
	if err := d.SetBootDevice(t.Context(), good, power.BootDevice{Device: "cdrom"}); power.Classify(err) != power.BadParams {
		t.Fatalf("boot device: %v", err)
	}
}
