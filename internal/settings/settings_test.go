package settings

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, raw string
		want      any
		err       string // part of the refusal; "" when accepted
	}{
		{"enlist_commissioning", "true", true, ""},
		{"enlist_commissioning", "False", false, ""},
		{"enlist_commissioning", "", false, ""},
		{"enlist_commissioning", "maybe", nil, "not a boolean"},
		{"maas_name", "dc-7", "dc-7", ""},
		{"maas_name", "  ", nil, "required"},
		{"node_timeout", "45", 45, ""},
		{"node_timeout", "0", nil, "greater than or equal to 1"},
		{"node_timeout", "ten", nil, "whole number"},
		{"node_timeout", "", nil, ""},
		{"session_length", "1209601", nil, "less than or equal to 1209600"},
		{"power_poll_interval", "5m", 300, ""},
		{"power_poll_interval", "120", 120, ""},
		{"power_poll_interval", "5", nil, "outside"},
		{"power_poll_interval", "soon", nil, "neither seconds"},
		{"maas_proxy_port", "8000", 8000, ""},
		{"maas_proxy_port", "80", nil, "reserved for system services"},
		{"maas_proxy_port", "5240", nil, "reserved for MAAS services"},
		{"maas_proxy_port", "70000", nil, "not between"},
		{"maas_syslog_port", "5247", 5247, ""},
		{"default_storage_layout", "lvm", "lvm", ""},
		{"default_storage_layout", "zfs", nil, "not one of the available choices"},
		{"active_discovery_interval", "3600", 3600, ""},
		{"active_discovery_interval", "3601", nil, "not one of"},
		{"maas_auto_ipmi_cipher_suite_id", "17", "17", ""},
		{"maas_auto_ipmi_workaround_flags", "opensesspriv, authcap opensesspriv", []string{"opensesspriv", "authcap"}, ""},
		{"maas_auto_ipmi_workaround_flags", "frobnicate", nil, "not one of"},
		{"maas_auto_ipmi_workaround_flags", "", []string{}, ""},
		{"http_proxy", "http://proxy.example:3128/", "http://proxy.example:3128/", ""},
		{"http_proxy", "ftp://proxy.example/", nil, "valid URL"},
		{"http_proxy", "", nil, ""},
		{"upstream_dns", "192.0.2.53, 2001:db8::53", "192.0.2.53 2001:db8::53", ""},
		{"upstream_dns", "192.0.2.300", nil, "Invalid IP address"},
		{"upstream_dns", "", nil, ""},
		{"ntp_servers", "ntp.example.org 192.0.2.123", "ntp.example.org 192.0.2.123", ""},
		{"ntp_servers", "bad_host!", nil, "Invalid"},
		{"ntp_server", "ntp.example.org", "ntp.example.org", ""}, // MAAS's old name
		{"dns_trusted_acl", "198.51.100.0/24 ns1.example", "198.51.100.0/24 ns1.example", ""},
		{"hardware_sync_interval", "1h 30m", "1h 30m", ""},
		{"hardware_sync_interval", "soon", nil, "not an interval"},
		{"remote_syslog", "syslog.example:514", "syslog.example:514", ""},
		{"remote_syslog", "syslog.example:99999", nil, "invalid port"},
		{"dnssec_validation", "no", "no", ""},
		// Numbers past what a consumer can hold: node_timeout in minutes
		// times time.Minute overflows a Duration.
		{"node_timeout", "10081", nil, "less than or equal to 10080"},
		{"node_timeout", "153722867280912931", nil, "less than or equal to"},
		{"node_timeout", "99999999999999999999", nil, "whole number"},
		{"max_node_commissioning_results", "1000000000", nil, "less than or equal to 1000"},
		{"default_dns_ttl", "2147483648", nil, "less than or equal to 2147483647"},
		{"subnet_ip_exhaustion_threshold_count", "1e9", nil, "whole number"},
		{"power_poll_interval", "18446744074", nil, "neither seconds"},
		{"power_poll_interval", "-1", nil, "neither seconds"},
	}
	for _, c := range cases {
		it, ok := Lookup(c.name)
		if !ok {
			t.Fatalf("%s: no such setting", c.name)
		}
		got, err := it.Parse(c.raw)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s=%q: refused: %v", c.name, c.raw, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s=%q: %v, want a refusal naming %q", c.name, c.raw, err, c.err)
		case c.err == "" && !reflect.DeepEqual(got, c.want):
			t.Errorf("%s=%q: %#v, want %#v", c.name, c.raw, got, c.want)
		}
		if err == nil {
			// What is stored reads back as it was answered.
			if back := it.Decode(Encode(got)); !reflect.DeepEqual(back, got) {
				t.Errorf("%s=%q: stored %s reads back as %#v", c.name, c.raw, Encode(got), back)
			}
		}
	}
}

// TestItems: every setting's default is one its own parser accepts and
// of the type it answers with, so get_config never answers a value
// set_config would refuse.
func TestItems(t *testing.T) {
	if len(All()) < 68 {
		t.Errorf("%d settings; MAAS has 68 and Anvil adds its own", len(All()))
	}
	for _, it := range All() {
		if it.Doc == "" {
			t.Errorf("%s has no doc", it.Name)
		}
		if it.Default == nil {
			continue
		}
		raw := ""
		switch d := it.Default.(type) {
		case bool:
			raw = map[bool]string{true: "true", false: "false"}[d]
		case int:
			raw = Encode(d)
		case string:
			raw = d
		case []string:
			raw = strings.Join(d, " ")
		}
		got, err := it.Parse(raw)
		if err != nil || !reflect.DeepEqual(got, it.Default) {
			t.Errorf("%s: default %#v parses as %#v, %v", it.Name, it.Default, got, err)
		}
	}
	if _, ok := Lookup("no_such_setting"); ok {
		t.Error("an unknown name was found")
	}
	if msg := (&UnknownError{Name: "foo"}).Error(); !strings.Contains(msg, "foo is not a valid config setting") || !strings.Contains(msg, "maas_name") {
		t.Errorf("unknown-name text: %s", msg)
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{"15m": 15 * time.Minute, "1h 30m": 90 * time.Minute, "2d": 48 * time.Hour, "45s": 45 * time.Second, "1w": 7 * 24 * time.Hour, "10min": 10 * time.Minute} {
		if got, err := ParseInterval(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	// 18446744074s wraps a Duration to about 0.7s; 106752w to a negative
	// total, 106751w 1w past it to a positive one.
	for _, in := range []string{"", "15", "m", "0m", "1y", "-5m", "18446744074s", "106752w", "106751w 1w", "3651d", "99999999999999999999s"} {
		if _, err := ParseInterval(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
