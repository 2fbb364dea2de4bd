package redfish_test

import (
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/redfish"
)

func TestBMCAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"10.0.0.5":                          "https://10.0.0.5:443",
		"10.0.0.5:8443":                     "https://10.0.0.5:8443",
		"bmc1.example":                      "https://bmc1.example:443",
		"http://10.0.0.5":                   "http://10.0.0.5:80",
		"https://10.0.0.5/redfish/v1/":      "https://10.0.0.5:443",
		"fd00::5":                           "https://[fd00::5]:443",
		"[fd00::5]:8443":                    "https://[fd00::5]:8443",
		"https://[fd00::5]:8443/redfish/v1": "https://[fd00::5]:8443",
	} {
		b, err := redfish.Driver{}.BMC(map[string]string{"power_address": addr, "node_id": "1"})
		if err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		if b.Type != "redfish" || b.Address != want || b.System != "1" {
			t.Errorf("%s: %+v, want address %s", addr, b, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := map[string]string{"power_address": "10.0.0.5", "power_user": "u", "power_pass": "p"}
	if err := (redfish.Driver{}).Validate(ok); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k, v, says string
	}{
		{"power_address", "", "required"},
		{"power_address", "ftp://10.0.0.5", "scheme"},
		{"power_address", "https://u:hunter2@10.0.0.5", "credentials"},
		{"power_address", "https://10.0.0.5/elsewhere", "service root"},
		{"power_address", "10.0.0.5:99999", "port"},
		{"power_verify_tls", "maybe", "true or false"},
		{"power_boot_type", "bios", "auto, efi or legacy"},
		{"power_verify_ssl", "n", "unknown power parameters power_verify_ssl"},
		{"power_user", "", "power_user is empty"},
	} {
		p := map[string]string{}
		for k, v := range ok {
			p[k] = v
		}
		p[c.k] = c.v
		err := redfish.Driver{}.Validate(p)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s=%q: error %v, want one saying %q", c.k, c.v, err, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q contains the password", err)
		}
	}
	_, err := redfish.Driver{}.BMC(map[string]string{})
	if power.Classify(err) != power.BadParams {
		t.Errorf("BMC without address: %v", err)
	}
}
