package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

// TestRackAddressesAreTaken: a rack's own addresses (on its interfaces as
// it reported them, and where it answers DNS) are never handed out: the
// allocator skips them, and a STATIC link or a reservation at one is
// refused as an address in use.
func TestRackAddressesAreTaken(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		untagged, err := e.srv.Store.GetVLANByVID(ctx, store.DefaultFabricID, 0)
		if err != nil {
			t.Fatal(err)
		}
		sn, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "prov", CIDR: "192.0.2.0/24", VLANID: untagged.ID, Managed: true, AllowDNS: true})
		if err != nil {
			t.Fatal(err)
		}
		err = e.srv.Store.ReportRack(ctx, store.Rack{SystemID: "rk-addr", Hostname: "rk", Address: "127.0.0.1", DNS: []string{"192.0.2.2"},
			Report: `{"interfaces":[{"name":"eth0","up":true,"addresses":["192.0.2.1/24","fe80::1/64"]}]}`})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			IP string `json:"ip"`
		}
		e.must(http.StatusOK, "POST", "ipaddresses/", e.admin, url.Values{"op": {"reserve"}, "subnet": {itoa(sn.ID)}}, &got)
		if got.IP != "192.0.2.3" {
			t.Fatalf("the allocator gave %s; .1 and .2 are the rack's", got.IP)
		}
		for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
			if code, b := e.call("POST", "ipaddresses/", e.admin, url.Values{"op": {"reserve"}, "ip": {ip}}); code != http.StatusNotFound {
				t.Errorf("reserve the rack's %s: %d %s", ip, code, b)
			}
		}
		m := e.addMachine("rackaddr", "52:54:00:1a:00:01", nil)
		eth0 := e.ifaces(m.SystemID)["eth0"]
		base := "nodes/" + m.SystemID + "/interfaces/" + id(eth0) + "/"
		e.must(http.StatusOK, http.MethodPut, base, e.admin, url.Values{"vlan": {itoa(untagged.ID)}}, nil)
		e.wantFieldError(http.MethodPost, base, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(sn.ID)}, "ip_address": {"192.0.2.1"}}, "ip_address", "IP address is already in use.")
		e.must(http.StatusOK, http.MethodPost, base, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(sn.ID)}, "ip_address": {"192.0.2.4"}}, nil)
	})
}
