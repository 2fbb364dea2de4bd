package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	fabricSchema = schema{"id": integer, "name": str, "class_type": strNull, "vlans": array, "resource_uri": str}
	spaceSchema  = schema{"id": integer, "name": str, "description": str, "vlans": array, "subnets": array, "resource_uri": str}
	routeSchema  = schema{"id": integer, "source": object, "destination": object, "gateway_ip": str, "metric": integer, "resource_uri": str}
	ipSchema     = schema{"alloc_type": integer, "alloc_type_name": str, "created": str, "ip": str, "owner": objNull,
		"interface_set": array, "subnet": object, "resource_uri": str}
)

// answerSays fails unless the call answers code with words in the body.
func (e *env) answerSays(code int, method, path, key string, form url.Values, words string) {
	e.t.Helper()
	got, b := e.call(method, path, key, form)
	if got != code || !strings.Contains(string(b), words) {
		e.t.Errorf("%s %s %v: %d %s, want %d with %q", method, path, form, got, b, code, words)
	}
}

func (e *env) count(path string) int {
	e.t.Helper()
	return len(decodeList(e.t, e.answer(http.StatusOK, "GET", path, e.admin, nil)))
}

// TestFabricsVLANsSpaces: the objects as MAAS shows them, and bad input
// answered in MAAS's words with nothing stored.
func TestFabricsVLANsSpaces(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		fabrics := decodeList(t, e.answer(http.StatusOK, "GET", "fabrics/", e.user, nil))
		if len(fabrics) != 1 || fabrics[0]["name"] != "fabric-0" {
			t.Fatalf("fabrics of a new region: %v", fabrics)
		}
		checkFields(t, "fabric-0", fabrics[0], fabricSchema)
		untagged := sub(t, map[string]any{"v": fabrics[0]["vlans"].([]any)[0]}, "v")
		checkFields(t, "fabric-0's VLAN", untagged, vlanSchema)
		wantJSON(t, "fabric-0's VLAN", untagged, "name", `"untagged"`)
		wantJSON(t, "fabric-0's VLAN", untagged, "vid", `0`)

		f := decodeObject(t, e.answer(http.StatusOK, "POST", "fabrics/", e.admin, url.Values{"description": {"row 2"}}))
		fid := kindValue(f["id"])
		if f["name"] != "fabric-"+fid || len(f["vlans"].([]any)) != 1 {
			t.Fatalf("new fabric %v", f)
		}
		e.answerSays(400, "POST", "fabrics/", e.admin, url.Values{"name": {"fabric-" + fid}}, "Fabric with this Name already exists.")
		e.answerSays(403, "POST", "fabrics/", e.user, url.Values{"name": {"mine"}}, "administrator")

		vpath := "fabrics/" + fid + "/vlans/"
		for _, c := range []struct {
			form  url.Values
			words string
		}{
			{url.Values{"vid": {"5000"}}, "VID must be between 0 and 4094."},
			{url.Values{"vid": {"-1"}}, "VID must be between 0 and 4094."},
			{url.Values{"vid": {"0"}}, "A VLAN with the specified VID already exists in the destination fabric."},
			{url.Values{"vid": {"10"}, "mtu": {"100"}}, "MTU must be between 552 and 65535."},
			{url.Values{"vid": {"ten"}}, "vid"},
			{url.Values{"name": {"novid"}}, "This field is required."},
			{url.Values{"vid": {"10"}, "space": {"nowhere"}}, "space"},
		} {
			e.answerSays(400, "POST", vpath, e.admin, c.form, c.words)
		}
		if n := e.count(vpath); n != 1 {
			t.Fatalf("%d VLANs after refused creations, want the untagged one", n)
		}
		sp := decodeObject(t, e.answer(http.StatusOK, "POST", "spaces/", e.admin, url.Values{"name": {"storage"}}))
		checkFields(t, "space", sp, spaceSchema)
		e.answerSays(400, "POST", "spaces/", e.admin, url.Values{"name": {"storage"}}, "Space with this Name already exists.")
		vl := decodeObject(t, e.answer(http.StatusOK, "POST", vpath, e.admin, url.Values{"vid": {"100"}, "name": {"san"}, "mtu": {"9000"}, "space": {"storage"}}))
		checkFields(t, "VLAN", vl, vlanSchema)
		wantJSON(t, "VLAN", vl, "space", `"storage"`)
		wantJSON(t, "VLAN", vl, "resource_uri", `"/MAAS/api/2.0/vlans/`+kindValue(vl["id"])+`/"`)
		e.answerSays(400, "POST", vpath, e.admin, url.Values{"vid": {"100"}}, "already exists")
		byVID := decodeObject(t, e.answer(http.StatusOK, "GET", vpath+"100/", e.user, nil))
		byID := decodeObject(t, e.answer(http.StatusOK, "GET", "vlans/"+kindValue(vl["id"])+"/", e.user, nil))
		if byVID["id"] != vl["id"] || byID["mtu"] != vl["mtu"] {
			t.Fatalf("VLAN by vid %v, by id %v", byVID, byID)
		}
		e.answerSays(404, "GET", vpath+"4000/", e.user, nil, "No VLAN matches the given query.")
		e.answerSays(404, "GET", "fabrics/999/vlans/", e.user, nil, "No Fabric matches the given query.")
		upd := decodeObject(t, e.answer(http.StatusOK, "PUT", vpath+"100/", e.admin, url.Values{"mtu": {"1500"}, "name": {"san2"}}))
		wantJSON(t, "updated VLAN", upd, "mtu", "1500")
		e.answerSays(400, "PUT", vpath+"100/", e.admin, url.Values{"vid": {"0"}}, "already exists")

		sn := decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.51.100.0/24"}, "vlan": {kindValue(vl["id"])}}))
		checkSubnet(t, "subnet on the VLAN", sn)
		wantJSON(t, "subnet on the VLAN", sn, "space", `"storage"`)
		wantJSON(t, "subnet's VLAN", sub(t, sn, "vlan"), "vid", "100")
		sp = decodeObject(t, e.answer(http.StatusOK, "GET", "spaces/"+kindValue(sp["id"])+"/", e.user, nil))
		if len(sp["vlans"].([]any)) != 1 || len(sp["subnets"].([]any)) != 1 {
			t.Fatalf("space %v", sp)
		}
		for _, s := range decodeList(t, e.answer(http.StatusOK, "GET", "spaces/", e.user, nil)) {
			checkFields(t, "listed space", s, spaceSchema)
		}
		e.answerSays(400, "DELETE", "spaces/-1/", e.admin, nil, "Space cannot be deleted: undefined")

		e.answerSays(400, "DELETE", "fabrics/0/", e.admin, nil, "This fabric is the default fabric, it cannot be deleted.")
		e.answerSays(400, "DELETE", "fabrics/"+fid+"/", e.admin, nil, "Can't delete fabric; the following subnets are still present: 198.51.100.0/24")
		e.answerSays(400, "DELETE", vpath+"0/", e.admin, nil, "This VLAN is the default VLAN in the fabric, it cannot be deleted.")
		if n := e.count("fabrics/"); n != 2 {
			t.Fatalf("%d fabrics after refused deletions", n)
		}
		// Deleting the tagged VLAN moves its subnet to the untagged one.
		e.must(204, "DELETE", vpath+"100/", e.admin, nil, nil)
		moved := decodeObject(t, e.answer(http.StatusOK, "GET", "subnets/"+kindValue(sn["id"])+"/", e.user, nil))
		wantJSON(t, "subnet of the deleted VLAN", sub(t, moved, "vlan"), "vid", "0")
		wantJSON(t, "subnet of the deleted VLAN", sub(t, moved, "vlan"), "fabric_id", fid)
		e.must(204, "DELETE", "subnets/"+kindValue(sn["id"])+"/", e.admin, nil, nil)
		e.must(204, "DELETE", "fabrics/"+fid+"/", e.admin, nil, nil)
		e.must(204, "DELETE", "spaces/"+kindValue(sp["id"])+"/", e.admin, nil, nil)
	})
}

// TestSubnetUseAndReservations: a subnet's ops as MAAS computes them, and
// ipaddresses/ refusing what MAAS refuses: an address outside every
// subnet, one already held, one in a dynamic range, another's release.
func TestSubnetUseAndReservations(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sn := decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}, "gateway_ip": {"192.0.2.1"}}))
		id := kindValue(sn["id"])
		e.must(200, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}}, nil)

		first := decodeObject(t, e.answer(http.StatusOK, "POST", "ipaddresses/", e.user, url.Values{"op": {"reserve"}, "subnet": {id}}))
		checkFields(t, "reserved", first, ipSchema)
		wantJSON(t, "reserved", first, "ip", `"192.0.2.2"`)
		wantJSON(t, "reserved", first, "alloc_type", "4")
		e.must(200, "POST", "ipaddresses/", e.user, url.Values{"op": {"reserve"}, "ip": {"192.0.2.5"}, "hostname": {"printer"}}, nil)
		// The hostname names the address in DNS, in the default domain (or
		// the one its tail names, which must exist).
		named := func() string {
			var rs []struct {
				FQDN string `json:"fqdn"`
				IPs  []struct {
					IP string `json:"ip"`
				} `json:"ip_addresses"`
			}
			e.must(200, "GET", "dnsresources/", e.user, nil, &rs)
			var out []string
			for _, r := range rs {
				for _, a := range r.IPs {
					out = append(out, r.FQDN+"="+a.IP)
				}
			}
			return strings.Join(out, " ")
		}
		if got := named(); got != "printer.maas=192.0.2.5" {
			t.Fatalf("DNS after reserving with a hostname: %q", got)
		}
		e.answerSays(404, "POST", "ipaddresses/", e.user, url.Values{"op": {"reserve"}, "ip": {"192.0.2.6"}, "hostname": {"scanner.nowhere"}},
			"No Domain matches the given query.")
		e.answerSays(400, "POST", "ipaddresses/", e.user, url.Values{"op": {"reserve"}, "ip": {"192.0.2.6"}, "hostname": {"-bad"}}, "hostname")
		for _, c := range []struct {
			code  int
			form  url.Values
			words string
		}{
			{400, url.Values{"ip": {"203.0.113.5"}}, "No known subnet for IP address: 203.0.113.5."},
			{400, url.Values{"subnet": {"nowhere"}}, "Unable to identify subnet: nowhere."},
			{400, url.Values{}, "Must supply either the 'subnet' or the 'ip' parameter."},
			{404, url.Values{"ip": {"192.0.2.5"}}, "The IP address 192.0.2.5 is already in use."},
			{403, url.Values{"ip": {"192.0.2.150"}}, "belongs to an existing dynamic range"},
			{400, url.Values{"ip": {"192.0.2.1"}}, "is the gateway"},
			{400, url.Values{"ip": {"192.0.2.255"}}, "broadcast"},
		} {
			c.form.Set("op", "reserve")
			e.answerSays(c.code, "POST", "ipaddresses/", e.user, c.form, c.words)
		}
		mine := decodeList(t, e.answer(http.StatusOK, "GET", "ipaddresses/", e.user, nil))
		if len(mine) != 2 {
			t.Fatalf("reservations after refusals: %v", mine)
		}
		e.answerSays(403, "GET", "ipaddresses/", e.user, url.Values{"all": {"true"}}, "Listing all IP addresses requires admin privileges.")

		stats := decodeObject(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, url.Values{"op": {"statistics"}}))
		for f, j := range map[string]string{"total_addresses": "254", "num_available": "151", "num_unavailable": "103",
			"largest_available": "94", "first_address": `"192.0.2.1"`, "last_address": `"192.0.2.254"`, "ip_version": "4", "usage_string": `"41%"`} {
			wantJSON(t, "statistics", stats, f, j)
		}
		used := decodeList(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, url.Values{"op": {"reserved_ip_ranges"}}))
		var purposes []string
		for _, u := range used {
			purposes = append(purposes, fmt.Sprint(u["start"], "-", u["end"], u["purpose"]))
		}
		if got := strings.Join(purposes, " "); got != "192.0.2.1-192.0.2.1[gateway-ip] 192.0.2.2-192.0.2.2[assigned-ip] 192.0.2.5-192.0.2.5[assigned-ip] 192.0.2.100-192.0.2.199[dynamic]" {
			t.Errorf("reserved_ip_ranges: %s", got)
		}
		free := decodeList(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, url.Values{"op": {"unreserved_ip_ranges"}}))
		if len(free) != 3 || free[0]["start"] != "192.0.2.3" || free[2]["end"] != "192.0.2.254" || kindValue(free[1]["num_addresses"]) != "94" {
			t.Errorf("unreserved_ip_ranges: %v", free)
		}
		ips := decodeList(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, url.Values{"op": {"ip_addresses"}}))
		if len(ips) != 2 || ips[0]["user"] != "alice" || kindValue(ips[0]["alloc_type"]) != "4" {
			t.Errorf("ip_addresses: %v", ips)
		}
		if _, err := time.Parse("Mon, 02 Jan. 2006 15:04:05", fmt.Sprint(ips[0]["created"])); err != nil {
			t.Errorf("ip_addresses' created, not as MAAS writes it: %v", err)
		}
		bare := decodeList(t, e.answer(http.StatusOK, "GET", "subnets/"+id+"/", e.user, url.Values{"op": {"ip_addresses"}, "with_username": {"0"}}))
		if _, ok := bare[0]["user"]; ok {
			t.Errorf("ip_addresses with_username=0: %v", bare)
		}

		e.answerSays(400, "DELETE", "subnets/"+id+"/", e.admin, nil, "Cannot delete a subnet that has IP addresses in use by nodes.")
		e.answerSays(400, "POST", "ipaddresses/", e.admin, url.Values{"op": {"release"}, "ip": {"192.0.2.5"}}, "does not belong to the requesting user")
		e.answerSays(403, "POST", "ipaddresses/", e.user, url.Values{"op": {"release"}, "ip": {"192.0.2.5"}, "force": {"true"}}, "requires admin privileges")
		e.must(204, "POST", "ipaddresses/", e.user, url.Values{"op": {"release"}, "ip": {"192.0.2.5"}}, nil)
		if got := named(); got != "" {
			t.Fatalf("DNS after the release: %q", got)
		}
		e.must(204, "POST", "ipaddresses/", e.admin, url.Values{"op": {"release"}, "ip": {"192.0.2.2"}, "force": {"true"}}, nil)
		e.must(204, "DELETE", "subnets/"+id+"/", e.admin, nil, nil)
	})
}

// TestRangeOwners: users reserve ranges and change only their own;
// dynamic ones are for administrators, as MAAS has it.
func TestRangeOwners(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(200, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}, nil)
		e.answerSays(403, "POST", "ipranges/", e.user, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.199"}},
			"Unable to create dynamic IP range. You don't have sufficient privileges.")
		mine := decodeObject(t, e.answer(http.StatusOK, "POST", "ipranges/", e.user, url.Values{"type": {"reserved"}, "start_ip": {"192.0.2.10"}, "end_ip": {"192.0.2.19"}}))
		theirs := decodeObject(t, e.answer(http.StatusOK, "POST", "ipranges/", e.admin, url.Values{"type": {"reserved"}, "start_ip": {"192.0.2.20"}, "end_ip": {"192.0.2.29"}}))
		wantJSON(t, "user's range", sub(t, mine, "user"), "username", `"alice"`)
		tp := "ipranges/" + kindValue(theirs["id"]) + "/"
		e.answerSays(403, "PUT", tp, e.user, url.Values{"comment": {"mine now"}}, "Unable to modify IP range. You don't own the IP range.")
		e.answerSays(403, "DELETE", tp, e.user, nil, "You don't own the IP range.")
		mp := "ipranges/" + kindValue(mine["id"]) + "/"
		e.answerSays(403, "PUT", mp, e.user, url.Values{"type": {"dynamic"}}, "sufficient privileges")
		wantJSON(t, "user's range", decodeObject(t, e.answer(http.StatusOK, "PUT", mp, e.user, url.Values{"comment": {"lab"}})), "comment", `"lab"`)
		e.must(204, "DELETE", mp, e.user, nil, nil)
		if n := e.count("ipranges/"); n != 1 {
			t.Fatalf("%d ranges, want the administrator's", n)
		}
	})
}

// TestReserveConcurrently: reservations sent at once never get one
// address twice (the unique index decides), and a full subnet says so.
func TestReserveConcurrently(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		sn := decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/28"}}))
		var mu sync.Mutex
		var wg sync.WaitGroup
		got, full := map[string]int{}, 0
		for range 16 { // 14 host addresses
			wg.Add(1)
			go func() {
				defer wg.Done()
				code, b := e.call("POST", "ipaddresses/", e.user, url.Values{"op": {"reserve"}, "subnet": {kindValue(sn["id"])}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case code == http.StatusOK:
					got[fmt.Sprint(decodeObject(t, b)["ip"])]++
				case code == http.StatusServiceUnavailable && strings.Contains(string(b), "No more IPs available in subnet: 192.0.2.0/28."):
					full++
				default:
					t.Errorf("reserve: %d %s", code, b)
				}
			}()
		}
		wg.Wait()
		for ip, n := range got {
			if n > 1 {
				t.Errorf("%s handed out %d times", ip, n)
			}
		}
		if len(got) != 14 || full != 2 {
			t.Fatalf("%d addresses, %d refusals; want 14 and 2", len(got), full)
		}
	})
}

// TestStaticRoutes: routes between subnets, with MAAS's refusals.
func TestStaticRoutes(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		a := kindValue(decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"192.0.2.0/24"}}))["id"])
		b := kindValue(decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"198.51.100.0/24"}}))["id"])
		v6 := kindValue(decodeObject(t, e.answer(http.StatusOK, "POST", "subnets/", e.admin, url.Values{"cidr": {"2001:db8::/64"}}))["id"])
		rt := decodeObject(t, e.answer(http.StatusOK, "POST", "static-routes/", e.admin, url.Values{"source": {a}, "destination": {b}, "gateway_ip": {"192.0.2.254"}, "metric": {"5"}}))
		checkFields(t, "route", rt, routeSchema)
		checkSubnet(t, "route's destination", sub(t, rt, "destination"))
		for _, c := range []struct {
			form  url.Values
			words string
		}{
			{url.Values{"source": {a}, "destination": {b}, "gateway_ip": {"192.0.2.254"}}, "already exists"},
			{url.Values{"source": {a}, "destination": {b}, "gateway_ip": {"198.51.100.1"}}, "gateway_ip must be with in the source subnet."},
			{url.Values{"source": {a}, "destination": {v6}, "gateway_ip": {"192.0.2.9"}}, "source and destination must be the same IP version."},
			{url.Values{"source": {a}, "destination": {a}, "gateway_ip": {"192.0.2.9"}}, "source and destination cannot be the same subnet."},
			{url.Values{"source": {a}, "destination": {"404"}, "gateway_ip": {"192.0.2.9"}}, "destination"},
			{url.Values{"source": {a}, "destination": {b}, "gateway_ip": {"192.0.2.9"}, "metric": {"-1"}}, "greater than or equal to 0"},
		} {
			e.answerSays(400, "POST", "static-routes/", e.admin, c.form, c.words)
		}
		if n := e.count("static-routes/"); n != 1 {
			t.Fatalf("%d routes after refusals", n)
		}
		e.answerSays(403, "POST", "static-routes/", e.user, url.Values{"source": {a}, "destination": {b}, "gateway_ip": {"192.0.2.9"}}, "administrator")
		path := "static-routes/" + kindValue(rt["id"]) + "/"
		wantJSON(t, "updated route", decodeObject(t, e.answer(http.StatusOK, "PUT", path, e.admin, url.Values{"metric": {"7"}})), "metric", "7")
		e.must(204, "DELETE", path, e.admin, nil, nil)
		e.answerSays(404, "GET", path, e.user, nil, "No StaticRoute matches the given query.")
	})
}
