package machine

import (
	"errors"
	"testing"
)

func TestMayUpdate(t *testing.T) {
	owner, admin := Actor{Name: "alice"}, Actor{Name: "root", Admin: true}
	for _, tc := range []struct {
		actor  Actor
		fields []string
		ok     bool
	}{
		{owner, []string{"hostname", "domain", "description"}, true},
		{owner, []string{"power_type"}, false},
		{owner, []string{"power_parameters_power_address"}, false},
		{owner, []string{"power_parameters"}, false},
		{owner, []string{"description", "zone"}, false},
		{owner, []string{"pool"}, false},
		{owner, []string{"drift_policy"}, false},
		{owner, []string{"architecture"}, false},
		{owner, []string{"cpu_count"}, false},
		{owner, []string{"memory"}, false},
		{owner, []string{"keep_credentials"}, false},
		{admin, UpdateFields(), true},
		{SystemActor, UpdateFields(), true},
	} {
		err := MayUpdate(tc.actor, tc.fields)
		if (err == nil) != tc.ok {
			t.Errorf("%s %v: err %v, want ok=%v", tc.actor.Name, tc.fields, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("%v is not ErrForbidden", err)
		}
	}
}

func TestMergePowerParams(t *testing.T) {
	old := map[string]string{"power_address": "192.0.2.1", "power_user": "admin", "power_pass": "s3cret", "power_driver": "LAN_2_0"}
	moved := MergePowerParams(old, map[string]string{"power_address": "192.0.2.99"}, true, false)
	if _, ok := moved["power_pass"]; ok || moved["power_user"] != "" {
		t.Errorf("moved BMC kept the credentials: %v", moved)
	}
	if moved["power_driver"] != "LAN_2_0" || moved["power_address"] != "192.0.2.99" {
		t.Errorf("moved BMC lost other parameters: %v", moved)
	}
	kept := MergePowerParams(old, map[string]string{"power_address": "192.0.2.99"}, true, true)
	if kept["power_pass"] != "s3cret" {
		t.Errorf("keep_credentials dropped them: %v", kept)
	}
	renamed := MergePowerParams(old, map[string]string{"power_address": "192.0.2.99", "power_pass": "new"}, true, false)
	if renamed["power_pass"] != "new" || renamed["power_user"] != "" {
		t.Errorf("given credentials: %v", renamed)
	}
	same := MergePowerParams(old, map[string]string{"power_driver": "LAN"}, false, false)
	if same["power_pass"] != "s3cret" {
		t.Errorf("an update on the same BMC dropped the password: %v", same)
	}
}

func TestMovesBMC(t *testing.T) {
	old := map[string]string{"power_address": "192.0.2.1", "power_user": "admin"}
	for _, tc := range []struct {
		oldType, newType string
		given            map[string]string
		want             bool
	}{
		{"ipmi", "ipmi", map[string]string{"power_user": "other"}, false},
		{"ipmi", "ipmi", map[string]string{"power_address": "192.0.2.1"}, false},
		{"ipmi", "ipmi", map[string]string{"power_address": "192.0.2.2"}, true},
		{"ipmi", "redfish", map[string]string{}, true},
		{"webhook", "webhook", map[string]string{"power_query_uri": "http://198.51.100.1/"}, true},
		{"redfish", "redfish", map[string]string{"node_id": "2"}, true},
	} {
		if got := MovesBMC(tc.oldType, tc.newType, old, tc.given); got != tc.want {
			t.Errorf("%s->%s %v: %v, want %v", tc.oldType, tc.newType, tc.given, got, tc.want)
		}
	}
}

func TestBMCIdentityIsCanonical(t *testing.T) {
	resolve := func(h string) string {
		if h == "localhost" || h == "bmc.example" {
			return "127.0.0.1"
		}
		return ""
	}
	want := "ipmi|127.0.0.1|623|"
	for _, a := range []string{"127.0.0.1", "127.0.0.1:623", "localhost", "LOCALHOST.:623", "localhost:623",
		"::ffff:127.0.0.1", "[::ffff:127.0.0.1]:623", "bmc.example.", " 127.0.0.1 "} {
		if got := BMCIdentity("ipmi", a, "", resolve); got != want {
			t.Errorf("%q: %q, want %q", a, got, want)
		}
	}
	if got := BMCIdentity("ipmi", "127.0.0.1:6230", "", resolve); got == want {
		t.Errorf("another port is the same BMC: %q", got)
	}
	rf := "redfish|127.0.0.1|443|/redfish/v1/Systems/1"
	for _, a := range []string{"https://127.0.0.1", "https://LOCALHOST.:443/", "127.0.0.1", "localhost:443", "https://[::ffff:127.0.0.1]"} {
		if got := BMCIdentity("redfish", a, "/redfish/v1/Systems/1", resolve); got != rf {
			t.Errorf("%q: %q, want %q", a, got, rf)
		}
	}
	if got := BMCIdentity("ipmi", "unresolvable.example", "", resolve); got != "ipmi|unresolvable.example|623|" {
		t.Errorf("unresolvable name: %q", got)
	}
	if got := BMCIdentity("ipmi", "", "", resolve); got != "" {
		t.Errorf("no address: %q", got)
	}
	if got := BMCIdentity("ipmi", "[2001:DB8::1]:623", "", nil); got != "ipmi|2001:db8::1|623|" {
		t.Errorf("IPv6: %q", got)
	}
}
