package api_test

import (
	"encoding/json"
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
	// Anvil has no fabric/VLAN, device, static IP, storage or network
	// deployment API: a client told so would call what is not there.
	if !slices.Equal(maas, []string{"authenticate-api"}) {
		t.Errorf("MAAS capabilities %v, want only authenticate-api", maas)
	}
}
