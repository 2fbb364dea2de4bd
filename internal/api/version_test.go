package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// maasCapabilities is MAAS 3.x's API_CAPABILITIES_LIST.
var maasCapabilities = []string{"networks-management", "static-ipaddresses", "ipv6-deployment-ubuntu",
	"devices-management", "storage-deployment-ubuntu", "network-deployment-ubuntu",
	"bridging-interface-ubuntu", "bridging-automatic-ubuntu", "authenticate-api"}

// TestVersion reads version/ as maascli and gomaasapi do, without
// credentials: MAAS's three keys and types, a MAAS 3 version, and of
// MAAS's capabilities only those Anvil has.
func TestVersion(t *testing.T) {
	e := start(t, "")
	a := e.mustCLI(200, "GET", "version/", "", nil)
	if ct := a.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	var v map[string]any
	if err := json.Unmarshal(a.body, &v); err != nil || len(v) != 3 {
		t.Fatalf("version/: %s (%v)", a.body, err)
	}
	if ver, _ := v["version"].(string); len(ver) < 3 || ver[:2] != "3." {
		t.Errorf("version %v, want a MAAS 3 version", v["version"])
	}
	if _, ok := v["subversion"].(string); !ok {
		t.Errorf("subversion %v, want a string", v["subversion"])
	}
	caps, _ := v["capabilities"].([]any)
	var maas []string
	for _, c := range caps {
		s, _ := c.(string)
		if slices.Contains(maasCapabilities, s) {
			maas = append(maas, s)
		} else if len(s) < 6 || s[:6] != "anvil-" {
			t.Errorf("capability %q is neither MAAS's nor Anvil's own", s)
		}
	}
	// No bridge_all at deployment, IPv6 deployment not proven: a client
	// told so would call what is not there.
	want := []string{"networks-management", "static-ipaddresses", "storage-deployment-ubuntu",
		"network-deployment-ubuntu", "bridging-interface-ubuntu", "devices-management", "authenticate-api"}
	if !slices.Equal(maas, want) {
		t.Errorf("MAAS capabilities %v, want %v", maas, want)
	}
}

// TestVersionCapabilitiesAnswer: each MAAS capability version/ claims
// has the API a client then calls; those it leaves out have none.
func TestVersionCapabilitiesAnswer(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.readyMachine("caps", "52:54:00:ca:00:01")
		for _, p := range []string{"fabrics/", "spaces/", "fabrics/0/vlans/", "ipaddresses/",
			"nodes/" + id + "/blockdevices/", "nodes/" + id + "/raids/", "nodes/" + id + "/volume-groups/",
			"nodes/" + id + "/bcaches/", "nodes/" + id + "/interfaces/", "devices/"} {
			if code, b := e.call(http.MethodGet, p, e.admin, nil); code != http.StatusOK {
				t.Errorf("GET %s: %d %s", p, code, b)
			}
		}
	})
}
