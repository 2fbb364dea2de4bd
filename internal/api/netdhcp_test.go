package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestVLANDHCPReachesTheRack: a subnet's DHCP is served when its VLAN's
// dhcp_on (MAAS's switch) is set, as when its own dhcp_on (Anvil's) is;
// the rack's boot stream carries it, and an IPv6 subnet is not sent to
// the rack's DHCPv4 server.
func TestVLANDHCPReachesTheRack(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, nil)
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"2001:db8::/64"}}, nil)
		e.answerSays(400, "PUT", "fabrics/0/vlans/0/", e.admin, url.Values{"dhcp_on": {"true"}}, "dhcp can only be turned on when a dynamic IP range is defined.")
		wantJSON(t, "VLAN refused DHCP", decodeObject(t, e.answer(http.StatusOK, "GET", "fabrics/0/vlans/0/", e.user, nil)), "dhcp_on", "false")
		e.must(200, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}}, nil)
		e.answerSays(400, "POST", "subnets/", e.admin, url.Values{"cidr": {"2001:db8:1::/64"}, "dhcp_on": {"true"}}, "IPv4 subnets only")
		vl := decodeObject(t, e.answer(http.StatusOK, "PUT", "fabrics/0/vlans/0/", e.admin, url.Values{"dhcp_on": {"true"}}))
		wantJSON(t, "VLAN", vl, "dhcp_on", "true")

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"api/2.0/rack/?op=boot_stream", nil)
		req.Header.Set("Authorization", oauth(e.admin))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || !strings.Contains(data, `"subnets"`) {
				continue
			}
			var ch struct {
				Subnets []struct {
					CIDR string `json:"cidr"`
					DHCP bool   `json:"dhcp"`
				} `json:"subnets"`
			}
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatal(err)
			}
			if ch.Subnets == nil {
				continue // another part of the stream (the DNS zones name subnets too)
			}
			if len(ch.Subnets) != 1 || ch.Subnets[0].CIDR != "192.0.2.0/24" || !ch.Subnets[0].DHCP {
				t.Fatalf("the rack's subnets: %s", data)
			}
			return
		}
		t.Fatalf("no subnets on the boot stream: %v", sc.Err())
	})
}
