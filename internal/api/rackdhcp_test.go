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

	"github.com/anvilmetal/anvil/internal/rack"
)

// streamAs follows the boot stream as the rack named host until its
// first snapshot is complete, and returns the subnets and the other
// racks' leases it was sent.
func (e *env) streamAs(host string) ([]rack.Subnet, []rack.Lease) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"api/2.0/rack/?op=boot_stream&hostname="+host, nil)
	req.Header.Set("Authorization", oauth(e.admin))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var subnets []rack.Subnet
	var leases []rack.Lease
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ch rack.Change
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			e.t.Fatal(err)
		}
		switch {
		case ch.Subnets != nil:
			subnets = *ch.Subnets
		case ch.Leases != nil:
			leases = *ch.Leases
		case ch.Synced:
			return subnets, leases
		}
	}
	e.t.Fatalf("the stream ended before its snapshot: %v", sc.Err())
	return nil, nil
}

func (e *env) rackID(host string) string {
	e.t.Helper()
	for _, c := range decodeList(e.t, e.answer(http.StatusOK, "GET", "rackcontrollers/", e.admin, nil)) {
		if c["hostname"] == host {
			return c["system_id"].(string)
		}
	}
	e.t.Fatalf("no rack %s", host)
	return ""
}

// TestVLANPrimaryAndSecondaryRack: setting a VLAN's two racks follows
// MAAS's rules and words, a refusal stores nothing, and each rack is
// streamed its share of the dynamic range and the other's leases.
func TestVLANPrimaryAndSecondaryRack(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, nil)
		e.must(200, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}}, nil)
		e.must(200, "PUT", "fabrics/0/vlans/0/", e.admin, url.Values{"dhcp_on": {"true"}}, nil)
		// With no primary, every rack serves the whole range.
		for _, h := range []string{"rack-a", "rack-b", "rack-c"} {
			ss, _ := e.streamAs(h)
			if len(ss) != 1 || !ss[0].DHCP || ss[0].Role != "" || len(ss[0].Dynamic) != 1 || ss[0].Dynamic[0] != [2]string{"192.0.2.100", "192.0.2.199"} || ss[0].Peer != nil {
				t.Fatalf("%s before any primary: %+v", h, ss)
			}
		}
		a, b := e.rackID("rack-a"), e.rackID("rack-b")

		vlan := "fabrics/0/vlans/0/"
		racksAre := func(p, s string) {
			t.Helper()
			v := decodeObject(t, e.answer(http.StatusOK, "GET", vlan, e.admin, nil))
			wantJSON(t, "VLAN", v, "primary_rack", p)
			wantJSON(t, "VLAN", v, "secondary_rack", s)
		}
		e.answerSays(400, "PUT", vlan, e.admin, url.Values{"secondary_rack": {b}}, "A secondary rack controller needs a primary rack controller")
		e.answerSays(400, "PUT", vlan, e.admin, url.Values{"primary_rack": {"nosuch"}}, "Select a valid choice. nosuch is not one of the available choices.")
		e.answerSays(400, "PUT", vlan, e.admin, url.Values{"primary_rack": {a}, "secondary_rack": {a}}, "The primary and secondary rack must be different")
		racksAre("null", "null")
		e.must(200, "PUT", vlan, e.admin, url.Values{"primary_rack": {"rack-a"}}, nil) // by host name, as MAAS takes it
		racksAre(`"`+a+`"`, "null")
		e.answerSays(400, "PUT", vlan, e.admin, url.Values{"secondary_rack": {a}}, a+" is already set as the primary rack controller")
		e.answerSays(400, "PUT", vlan, e.admin, url.Values{"secondary_rack": {"rack-a"}, "mtu": {"9000"}}, a+" is already set as the primary rack controller")
		wantJSON(t, "VLAN after refusals", decodeObject(t, e.answer(http.StatusOK, "GET", vlan, e.admin, nil)), "mtu", "1500")
		e.must(200, "PUT", vlan, e.admin, url.Values{"secondary_rack": {b}}, nil)
		racksAre(`"`+a+`"`, `"`+b+`"`)

		sa, la := e.streamAs("rack-a")
		sb, lb := e.streamAs("rack-b")
		sc, _ := e.streamAs("rack-c")
		low, high := [][2]string{{"192.0.2.100", "192.0.2.149"}}, [][2]string{{"192.0.2.150", "192.0.2.199"}}
		if len(sa) != 1 || !sa[0].DHCP || sa[0].Role != "primary" || !same(sa[0].Dynamic, low) || !same(sa[0].Peer, high) {
			t.Errorf("the primary's subnet: %+v", sa)
		}
		if len(sb) != 1 || !sb[0].DHCP || sb[0].Role != "secondary" || !same(sb[0].Dynamic, high) || !same(sb[0].Peer, low) {
			t.Errorf("the secondary's subnet: %+v", sb)
		}
		if len(sc) != 1 || sc[0].DHCP || sc[0].Role != "bystander" || sc[0].Dynamic != nil {
			t.Errorf("a third rack's subnet: %+v", sc)
		}
		if la == nil || len(la) != 0 || lb == nil || len(lb) != 0 {
			t.Errorf("leases before any report: %+v, %+v", la, lb)
		}

		// The primary reports its leases; the secondary is streamed them.
		exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		report := func(host string, ls ...rack.Lease) (int, []byte) {
			b, _ := json.Marshal(ls)
			return e.call("POST", "rack/?op=dhcp_leases", e.admin, url.Values{"hostname": {host}, "leases": {string(b)}})
		}
		good := rack.Lease{MAC: "52:54:00:AA:00:01", IP: "192.0.2.100", Subnet: "192.0.2.0/24", Expires: exp}
		for _, bad := range []rack.Lease{
			{MAC: "52:54:00:aa:00:02", IP: "192.0.2.300", Subnet: "192.0.2.0/24", Expires: exp},
			{MAC: "52:54:00:aa:00:02", IP: "198.51.100.7", Subnet: "192.0.2.0/24", Expires: exp},
			{MAC: "junk", IP: "192.0.2.101", Subnet: "192.0.2.0/24", Expires: exp},
			{MAC: "52:54:00:aa:00:02", IP: "192.0.2.101", Subnet: "192.0.2.0/24"},
			{MAC: "52:54:00:aa:00:01", IP: "192.0.2.101", Subnet: "192.0.2.0/24", Expires: exp}, // the MAC twice
			// An expiry past any lease time would hold the address for good.
			{MAC: "52:54:00:aa:00:02", IP: "192.0.2.101", Subnet: "192.0.2.0/24", Expires: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
		} {
			if code, body := report("rack-a", good, bad); code != 400 {
				t.Errorf("report with %+v: %d %s", bad, code, body)
			}
		}
		if _, lb := e.streamAs("rack-b"); len(lb) != 0 {
			t.Fatalf("a refused report stored %+v", lb)
		}
		if code, body := report("rack-a", good); code != 200 {
			t.Fatalf("report: %d %s", code, body)
		}
		_, lb = e.streamAs("rack-b")
		if len(lb) != 1 || lb[0].MAC != "52:54:00:aa:00:01" || lb[0].IP != "192.0.2.100" || !lb[0].Expires.Equal(exp) {
			t.Errorf("the secondary's partner leases: %+v", lb)
		}
		if _, la := e.streamAs("rack-a"); len(la) != 0 {
			t.Errorf("the primary was streamed its own leases: %+v", la)
		}

		// Clearing the primary promotes the secondary (MAAS's rule): it
		// serves the whole range, and still knows the other's clients.
		e.must(200, "PUT", vlan, e.admin, url.Values{"primary_rack": {""}}, nil)
		racksAre(`"`+b+`"`, "null")
		sb, lb = e.streamAs("rack-b")
		if len(sb) != 1 || sb[0].Role != "primary" || !same(sb[0].Dynamic, [][2]string{{"192.0.2.100", "192.0.2.199"}}) || sb[0].Peer != nil || len(lb) != 1 {
			t.Errorf("the promoted rack: %+v, leases %+v", sb, lb)
		}
	})
}

func same(a, b [][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
