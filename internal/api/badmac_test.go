package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/agentapi"
)

// TestMachineMACsRefused adds machines, through the API and by anonymous
// enlistment, with MACs no interface has: the broadcast address, zeros and
// multicast. Each is a 400 naming the field and why, and no machine is
// stored.
func TestMachineMACsRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		before := e.countMachines()
		for mac, why := range map[string]string{
			"ff:ff:ff:ff:ff:ff": "broadcast",
			"FF-FF-FF-FF-FF-FF": "broadcast",
			"00:00:00:00:00:00": "all zeros",
			"01:00:5e:00:00:fb": "multicast",
			"33:33:00:00:00:01": "multicast",
		} {
			for _, macs := range [][]string{{mac}, {"52:54:00:00:01:01", mac}} {
				code, body := e.call(http.MethodPost, "machines/", e.admin, url.Values{"hostname": {"bad-mac"}, "mac_addresses": macs})
				var fields map[string][]string
				if code != http.StatusBadRequest || json.Unmarshal(body, &fields) != nil || len(fields["mac_addresses"]) != 1 ||
					!strings.Contains(fields["mac_addresses"][0], why) {
					t.Errorf("create with %v: %d %s; want 400 on mac_addresses saying %q", macs, code, body, why)
				}
			}
		}
		_, err := e.agent("").Enlist(t.Context(), agentapi.EnlistRequest{Identity: ident("", "ff:ff:ff:ff:ff:ff"),
			Inventory: testInventory("ff:ff:ff:ff:ff:ff")})
		if !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "broadcast") {
			t.Errorf("enlist with the broadcast MAC: %v; want a 400 saying broadcast", err)
		}
		if n := e.countMachines(); n != before {
			t.Errorf("%d machines stored by refused requests", n-before)
		}
	})
}
