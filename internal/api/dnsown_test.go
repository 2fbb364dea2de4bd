package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

// dnsSnapshot is every DNS name with its addresses and records, one
// line each, as the administrator sees them.
func (e *env) dnsSnapshot() string {
	e.t.Helper()
	var rs []struct {
		FQDN string `json:"fqdn"`
		IPs  []struct {
			IP string `json:"ip"`
		} `json:"ip_addresses"`
		Records []struct {
			Type string `json:"rrtype"`
			Data string `json:"rrdata"`
		} `json:"resource_records"`
	}
	e.must(http.StatusOK, "GET", "dnsresources/", e.admin, nil, &rs)
	var lines []string
	for _, r := range rs {
		l := r.FQDN + " ="
		for _, a := range r.IPs {
			l += " " + a.IP
		}
		for _, d := range r.Records {
			l += " " + d.Type + ":" + d.Data
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// reserve is ipaddresses/ op=reserve with form.
func reserve(form url.Values) url.Values {
	form.Set("op", "reserve")
	return form
}

// TestReservationsKeepOthersNames: a user's ipaddresses/ reserve and
// release, devices and STATIC links never touch a DNS name, record or
// address of an administrator's, another user's, or a machine's or
// device's: each attempt is refused in MAAS's words and every name is
// as it was. The owner still does all of it to its own names.
func TestReservationsKeepOthersNames(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		subnet := fmt.Sprint(e.newSubnet("192.0.2.0/24").ID)
		e.must(http.StatusOK, "POST", "domains/", e.admin, url.Values{"name": {"example.test"}}, nil)
		e.must(http.StatusOK, "POST", "domains/", e.admin, url.Values{"name": {"lab.example.test"}}, nil)
		// The administrator's names: an address, a record, a device.
		e.must(http.StatusOK, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"www.example.test"}, "ip_addresses": {"192.0.2.80"}}, nil)
		e.must(http.StatusOK, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"db.maas"}, "ip_addresses": {"192.0.2.81"}}, nil)
		e.must(http.StatusOK, "POST", "dnsresourcerecords/", e.admin, url.Values{"fqdn": {"notes.maas"}, "rrtype": {"TXT"}, "rrdata": {"keep"}}, nil)
		var gw apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.admin, url.Values{"hostname": {"gw"}, "mac_addresses": {"52:54:00:00:d1:01"}}, &gw)
		e.must(http.StatusOK, "POST", fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", gw.SystemID, gw.Interfaces[0].ID), e.admin,
			url.Values{"mode": {"STATIC"}, "subnet": {subnet}, "ip_address": {"192.0.2.90"}}, nil)
		// Another user's name.
		bob := e.userKey("bob")
		e.must(http.StatusOK, "POST", "ipaddresses/", bob, reserve(url.Values{"ip": {"192.0.2.30"}, "hostname": {"bobs"}}), nil)
		before := e.dnsSnapshot()
		if !strings.Contains(before, "bobs.maas = 192.0.2.30") || !strings.Contains(before, "db.maas = 192.0.2.81") {
			t.Fatalf("DNS before: %s", before)
		}

		var mine apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.user, url.Values{"hostname": {"ct1"}, "mac_addresses": {"52:54:00:00:d1:02"}}, &mine)
		// A machine of the user's.
		m := e.addMachine("m1", "52:54:00:00:d1:05", nil)
		e.commissioned(m.SystemID, machine.Ready, testInventory("52:54:00:00:d1:05"))
		e.must(http.StatusOK, "POST", "machines/?op=allocate", e.user, url.Values{"system_id": {m.SystemID}}, nil)
		mp := "machines/" + m.SystemID + "/"
		link := fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", mine.SystemID, mine.Interfaces[0].ID)
		const taken = "Labels must be unique within their zone."
		for _, c := range []struct {
			what   string
			method string
			path   string
			form   url.Values
			code   int
			says   string
		}{
			{"point the administrator's name at its address", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.40"}, "hostname": {"www.example.test"}}), 400, taken},
			{"the same with the next free address", "POST", "ipaddresses/", reserve(url.Values{"subnet": {subnet}, "hostname": {"www.example.test"}}), 400, taken},
			{"the same with a MAC", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.41"}, "hostname": {"www.example.test"}, "mac": {"52:54:00:00:d1:09"}}), 400, taken},
			{"add an address to another user's name", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.42"}, "hostname": {"bobs"}}), 400, taken},
			{"add an address to a name with records", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.43"}, "hostname": {"notes.maas"}}), 400, taken},
			{"add an address to the administrator's device", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.44"}, "hostname": {"gw"}}), 400, taken},
			{"answer for the whole default domain", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.45"}, "hostname": {"*"}}), 400, taken},
			{"answer for the administrator's domain", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.46"}, "hostname": {"@.example.test"}}), 400, taken},
			{"answer for every name of the administrator's domain", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.47"}, "hostname": {"*.example.test"}}), 400, taken},
			{"answer for another domain's apex", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.48"}, "hostname": {"lab.example.test"}}), 400, taken},
			{"reserve the address the administrator's name lists", "POST", "ipaddresses/", reserve(url.Values{"ip": {"192.0.2.81"}}), 404, "The IP address 192.0.2.81 is already in use."},
			{"release the address the administrator's name lists", "POST", "ipaddresses/", url.Values{"op": {"release"}, "ip": {"192.0.2.81"}}, 400, "does not belong to the requesting user"},
			{"release another user's reservation", "POST", "ipaddresses/", url.Values{"op": {"release"}, "ip": {"192.0.2.30"}}, 400, "does not belong to the requesting user"},
			{"force it", "POST", "ipaddresses/", url.Values{"op": {"release"}, "ip": {"192.0.2.30"}, "force": {"true"}}, 403, "requires admin privileges"},
			{"release the administrator's device's address", "POST", "ipaddresses/", url.Values{"op": {"release"}, "ip": {"192.0.2.90"}}, 400, "does not belong to the requesting user"},
			{"name a device after the administrator's name", "POST", "devices/", url.Values{"hostname": {"www"}, "domain": {"example.test"}, "mac_addresses": {"52:54:00:00:d1:03"}}, 400, taken},
			{"rename its device after another user's name", "PUT", "devices/" + mine.SystemID + "/", url.Values{"hostname": {"bobs"}}, 400, taken},
			{"rename its device after a name with records", "PUT", "devices/" + mine.SystemID + "/", url.Values{"hostname": {"notes"}}, 400, taken},
			{"rename its machine after the administrator's name", "PUT", mp, url.Values{"hostname": {"db"}}, 400, taken},
			{"move its machine onto the administrator's name", "PUT", mp, url.Values{"hostname": {"www"}, "domain": {"example.test"}}, 400, taken},
			{"deploy its machine as another user's name", "POST", mp + "?op=deploy", url.Values{"hostname": {"bobs"}}, 400, taken},
			{"link its device to another user's name's address", "POST", link, url.Values{"mode": {"STATIC"}, "subnet": {subnet}, "ip_address": {"192.0.2.30"}}, 400, "already in use"},
			{"link its device to the administrator's name's address", "POST", link, url.Values{"mode": {"STATIC"}, "subnet": {subnet}, "ip_address": {"192.0.2.80"}}, 400, "IP address is already in use."},
		} {
			e.answerSays(c.code, c.method, c.path, e.user, c.form, c.says)
			if after := e.dnsSnapshot(); after != before {
				t.Errorf("%s: DNS changed:\n%s\nwas:\n%s", c.what, after, before)
				before = after // each attempt is judged on its own
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		var d apiDevice
		e.must(http.StatusOK, "GET", "devices/"+mine.SystemID+"/", e.user, nil, &d)
		if d.Hostname != "ct1" || len(d.IPAddresses) != 0 {
			t.Fatalf("refused changes changed the device: %+v", d)
		}
		if got := e.machine(m.SystemID); got.Hostname != "m1" {
			t.Fatalf("refused changes renamed the machine: %+v", got)
		}
		var ips []struct {
			IP string `json:"ip"`
		}
		e.must(http.StatusOK, "GET", "ipaddresses/", e.user, nil, &ips)
		if len(ips) != 0 {
			t.Fatalf("refused reservations left addresses: %+v", ips)
		}

		// The owner's own names: made, added to, taken from, gone.
		e.must(http.StatusOK, "POST", "ipaddresses/", e.user, reserve(url.Values{"ip": {"192.0.2.50"}, "hostname": {"printer"}}), nil)
		e.must(http.StatusOK, "POST", "ipaddresses/", e.user, reserve(url.Values{"subnet": {subnet}, "hostname": {"printer.maas"}}), nil)
		e.must(http.StatusOK, "PUT", "devices/"+mine.SystemID+"/", e.user, url.Values{"hostname": {"ct2"}}, nil)
		e.must(http.StatusOK, "PUT", mp, e.user, url.Values{"hostname": {"m2"}}, nil)
		// An administrator's name on the user's address is the
		// administrator's: the user's release leaves it.
		e.must(http.StatusOK, "POST", "dnsresources/", e.admin, url.Values{"fqdn": {"alias.maas"}, "ip_addresses": {"192.0.2.50"}}, nil)
		e.must(http.StatusNoContent, "POST", "ipaddresses/", e.user, url.Values{"op": {"release"}, "ip": {"192.0.2.50"}}, nil)
		got := e.dnsSnapshot()
		if !strings.Contains(got, "alias.maas = 192.0.2.50") || !strings.Contains(got, "printer.maas = 192.0.2.1\n") {
			t.Fatalf("DNS after the owner's release:\n%s", got)
		}
		e.must(http.StatusNoContent, "POST", "ipaddresses/", e.user, url.Values{"op": {"release"}, "ip": {"192.0.2.1"}}, nil)
		if got := e.dnsSnapshot(); strings.Contains(got, "printer") {
			t.Fatalf("the owner's name outlived its addresses:\n%s", got)
		}
		// Administrators keep theirs: adding to and releasing from their
		// own name.
		e.must(http.StatusOK, "POST", "ipaddresses/", e.admin, reserve(url.Values{"ip": {"192.0.2.60"}, "hostname": {"www.example.test"}}), nil)
		if got := e.dnsSnapshot(); !strings.Contains(got, "www.example.test = 192.0.2.80 192.0.2.60") {
			t.Fatalf("the administrator's reservation on its name:\n%s", got)
		}
		e.must(http.StatusNoContent, "POST", "ipaddresses/", e.admin, url.Values{"op": {"release"}, "ip": {"192.0.2.60"}}, nil)
		if got := e.dnsSnapshot(); !strings.Contains(got, "www.example.test = 192.0.2.80\n") {
			t.Fatalf("the administrator's release:\n%s", got)
		}
	})
}

// TestDynamicRangeOverHeldAddresses: a dynamic range may not cover a
// reserved IP, a user's reservation or a STATIC address, on create or on
// update; MAAS's words, nothing stored. A reserved range may, and a
// dynamic range changed where nothing is held is fine.
func TestDynamicRangeOverHeldAddresses(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		subnet := fmt.Sprint(e.newSubnet("192.0.2.0/24").ID)
		e.must(http.StatusOK, "POST", "reservedips/", e.admin, url.Values{"ip": {"192.0.2.50"}, "mac_address": {"52:54:00:00:d2:01"}}, nil)
		e.must(http.StatusOK, "POST", "ipaddresses/", e.user, reserve(url.Values{"ip": {"192.0.2.60"}}), nil)
		var dev apiDevice
		e.must(http.StatusOK, "POST", "devices/", e.user, url.Values{"hostname": {"ct1"}, "mac_addresses": {"52:54:00:00:d2:02"}}, &dev)
		e.must(http.StatusOK, "POST", fmt.Sprintf("nodes/%s/interfaces/%d/?op=link_subnet", dev.SystemID, dev.Interfaces[0].ID), e.user,
			url.Values{"mode": {"STATIC"}, "subnet": {subnet}, "ip_address": {"192.0.2.70"}}, nil)
		var ok struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {"192.0.2.100"}, "end_ip": {"192.0.2.150"}}, &ok)
		path := fmt.Sprintf("ipranges/%d/", ok.ID)
		ranges := func() int { return e.count("ipranges/") }
		n := ranges()
		const conflict = "Requested dynamic range conflicts with an existing IP address or range."
		for _, held := range []string{"192.0.2.50", "192.0.2.60", "192.0.2.70"} {
			e.answerSays(400, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "start_ip": {held}, "end_ip": {held}}, conflict)
			e.answerSays(400, "PUT", path, e.admin, url.Values{"start_ip": {held}}, conflict)
		}
		e.answerSays(400, "POST", "ipranges/", e.admin, url.Values{"type": {"dynamic"}, "subnet": {subnet}, "start_ip": {"192.0.2.40"}, "end_ip": {"192.0.2.99"}}, conflict)
		// A reserved range turned dynamic over a held address is refused too.
		var rr struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, "POST", "ipranges/", e.admin, url.Values{"type": {"reserved"}, "start_ip": {"192.0.2.45"}, "end_ip": {"192.0.2.55"}}, &rr)
		e.answerSays(400, "PUT", fmt.Sprintf("ipranges/%d/", rr.ID), e.admin, url.Values{"type": {"dynamic"}}, conflict)
		if got := ranges(); got != n+1 {
			t.Fatalf("refused ranges stored: %d ranges, want %d", got, n+1)
		}
		var cur struct {
			Start string `json:"start_ip"`
			Type  string `json:"type"`
		}
		e.must(http.StatusOK, "GET", path, e.admin, nil, &cur)
		if cur.Start != "192.0.2.100" {
			t.Fatalf("a refused update changed the range: %+v", cur)
		}
		e.must(http.StatusOK, "GET", fmt.Sprintf("ipranges/%d/", rr.ID), e.admin, nil, &cur)
		if cur.Type != "reserved" {
			t.Fatalf("a refused update changed the range: %+v", cur)
		}
		// Growing where nothing is held, and a reservation made with a MAC
		// inside the range, which later changes keep.
		e.must(http.StatusOK, "PUT", path, e.admin, url.Values{"end_ip": {"192.0.2.160"}}, nil)
		e.must(http.StatusOK, "POST", "ipaddresses/", e.user, reserve(url.Values{"ip": {"192.0.2.120"}, "mac": {"52:54:00:00:d2:03"}}), nil)
		e.must(http.StatusOK, "PUT", path, e.admin, url.Values{"comment": {"still fine"}}, nil)
	})
}

// TestReservedNameRace: two users reserve, at once, addresses under one
// new name: the name is the first one's, the other is refused in MAAS's
// words, and its address is not left reserved; the name lists only the
// winner's address.
func TestReservedNameRace(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.newSubnet("192.0.2.0/24")
		keys := []string{e.user, e.userKey("bob")}
		const rounds = 8
		for i := range rounds {
			name := fmt.Sprintf("race%d", i)
			codes := make([]int, 2)
			bodies := make([]string, 2)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for k, key := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					form := reserve(url.Values{"ip": {fmt.Sprintf("192.0.2.%d", 10+2*i+k)}, "hostname": {name}})
					c, b := e.call("POST", "ipaddresses/", key, form)
					codes[k], bodies[k] = c, string(b)
				}()
			}
			close(start)
			wg.Wait()
			if codes[0]+codes[1] != 600 || (codes[0] == 200) == (codes[1] == 200) {
				t.Fatalf("%s: %d %s / %d %s; want one 200 and one 400", name, codes[0], bodies[0], codes[1], bodies[1])
			}
			loser := 1
			if codes[1] == 200 {
				loser = 0
			}
			if !strings.Contains(bodies[loser], "Labels must be unique within their zone.") {
				t.Fatalf("%s: the refusal says %s", name, bodies[loser])
			}
			want := fmt.Sprintf("%s.maas = 192.0.2.%d\n", name, 10+2*i+(1-loser))
			if got := e.dnsSnapshot(); !strings.Contains(got, want) {
				t.Fatalf("%s: DNS\n%s\nwant %q", name, got, want)
			}
		}
		var ips []any
		e.must(http.StatusOK, "GET", "ipaddresses/", e.admin, url.Values{"all": {"true"}}, &ips)
		if len(ips) != rounds {
			t.Fatalf("%d addresses reserved after %d rounds, want one a round", len(ips), rounds)
		}
	})
}
