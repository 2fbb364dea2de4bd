package api_test

import (
	"net/url"
	"strings"
	"testing"
)

func TestSubnetsAndRanges(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		var sn struct {
			ID     int64  `json:"id"`
			CIDR   string `json:"cidr"`
			DHCPOn bool   `json:"dhcp_on"`
		}
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.7/24"}, "gateway_ip": {"192.0.2.1"}, "dns_servers": {"192.0.2.1"}, "dhcp_on": {"true"}}, &sn)
		if sn.CIDR != "192.0.2.0/24" || !sn.DHCPOn {
			t.Fatalf("subnet %+v", sn)
		}
		id := itoaT(sn.ID)
		e.must(200, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}, "subnet": {id}}, nil)
		for _, c := range []struct {
			form url.Values
			code int
			says string
		}{
			{url.Values{"cidr": {"nonsense"}}, 400, "cidr"},
			{url.Values{"cidr": {"198.51.100.0/24"}, "gateway_ip": {"192.0.2.1"}}, 400, "gateway_ip"},
			{url.Values{"cidr": {"192.0.2.0/24"}}, 400, "Subnet 192.0.2.0/24 would overlap with existing subnets."},
			{url.Values{"cidr": {"192.0.2.128/25"}}, 400, "would overlap"},
			{url.Values{"cidr": {"198.51.100.0/24"}, "vlan": {"9999"}}, 400, "vlan"},
			{url.Values{"cidr": {"198.51.100.0/24"}, "fabric": {"0"}, "vid": {"77"}}, 400, "No VLAN with vid 77 in fabric-0."},
			{url.Values{"cidr": {"198.51.100.0/24"}, "rdns_mode": {"7"}}, 400, "rdns_mode"},
		} {
			code, body := e.call("POST", "subnets/", e.admin, c.form)
			if code != c.code || !strings.Contains(string(body), c.says) {
				t.Errorf("subnet %v: %d %s", c.form, code, body)
			}
		}
		for _, c := range []struct {
			form url.Values
			code int
			says string
		}{
			{url.Values{"start_ip": {"192.0.2.150"}, "end_ip": {"192.0.2.160"}}, 400, "Requested dynamic range conflicts with an existing IP address or range."},
			{url.Values{"start_ip": {"192.0.2.250"}, "end_ip": {"192.0.2.240"}}, 400, "End IP address must not be less than Start IP address."},
			{url.Values{"start_ip": {"198.51.100.1"}, "end_ip": {"198.51.100.9"}}, 400, "subnet"},
			{url.Values{"type": {"static"}, "start_ip": {"192.0.2.1"}, "end_ip": {"192.0.2.9"}}, 400, "type"},
		} {
			code, body := e.call("POST", "ipranges/", e.admin, c.form)
			if code != c.code || !strings.Contains(string(body), c.says) {
				t.Errorf("range %v: %d %s", c.form, code, body)
			}
		}
		e.must(200, "POST", "ipranges/", e.admin, url.Values{"type": {"reserved"}, "start_ip": {"192.0.2.2"}, "end_ip": {"192.0.2.9"}}, nil)
		e.must(403, "POST", "subnets/", e.user, url.Values{"cidr": {"198.51.100.0/24"}}, nil)
		e.must(200, "PUT", "subnets/"+id+"/", e.admin, url.Values{"dhcp_on": {"false"}}, &sn)
		if sn.DHCPOn {
			t.Fatal("dhcp_on not switched off")
		}
		e.must(204, "DELETE", "subnets/"+id+"/", e.admin, nil, nil)
		var rs []any
		e.must(200, "GET", "ipranges/", e.admin, nil, &rs)
		if len(rs) != 0 {
			t.Fatalf("%d ranges outlived their subnet", len(rs))
		}
	})
}
