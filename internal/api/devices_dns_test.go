package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// TestDNSForDevice proves with the real dig that a device's addresses
// enter the racks' DNS through the same feed as machines': host.domain
// for its first interface's address, iface.host.domain for another's,
// the PTR, a domain of its own; and that its deletion takes them away.
func TestDNSForDevice(t *testing.T) {
	needDig(t)
	eachDB(t, func(t *testing.T, e *env) {
		ns := e.srv.Rack.DNS.String()
		var sn struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, &sn)
		e.must(http.StatusOK, "POST", "domains/", e.admin, url.Values{"name": {"lab.example"}}, nil)
		var d apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.user, url.Values{"hostname": {"ct9"}, "domain": {"lab.example"},
			"mac_addresses": {"52:54:00:00:e9:01", "52:54:00:00:e9:02"}}, &d)
		if d.FQDN != "ct9.lab.example" {
			t.Fatalf("fqdn %q", d.FQDN)
		}
		link := func(id int64, form url.Values) {
			form.Set("subnet", fmt.Sprint(sn.ID))
			e.must(http.StatusOK, "POST", fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", d.SystemID, id), e.user, form, nil)
		}
		link(d.Interfaces[1].ID, url.Values{"mode": {"STATIC"}, "ip_address": {"192.0.2.61"}})
		link(d.Interfaces[0].ID, url.Values{"mode": {"AUTO"}})
		want := map[string]string{
			"ct9.lab.example":         "ct9.lab.example. 30 IN A 192.0.2.1",
			"eth1.ct9.lab.example":    "eth1.ct9.lab.example. 30 IN A 192.0.2.61",
			"1.2.0.192.in-addr.arpa":  "1.2.0.192.in-addr.arpa. 30 IN PTR ct9.lab.example.",
			"61.2.0.192.in-addr.arpa": "61.2.0.192.in-addr.arpa. 30 IN PTR eth1.ct9.lab.example.",
		}
		within(t, "the device's addresses resolve", 5*time.Second, func() bool {
			for name, w := range want {
				typ := "A"
				if len(name) > 5 && name[len(name)-5:] == ".arpa" {
					typ = "PTR"
				}
				if _, l := dig(t, ns, name, typ, "+norec"); !slices.Contains(l, w) {
					return false
				}
			}
			return true
		})
		e.answer(http.StatusNoContent, "DELETE", "devices/"+d.SystemID+"/", e.user, nil)
		within(t, "the deleted device's name goes", 5*time.Second, func() bool {
			status, _ := dig(t, ns, "ct9.lab.example", "A", "+norec")
			return status == "NXDOMAIN"
		})
	}, withDNS)
}
