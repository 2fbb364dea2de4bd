package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
)

// autoRow links the machine's eth0 AUTO on the fixture's subnet and
// returns that link's row, not yet given an address.
func (e *env) autoRow(f netFixture, systemID string) store.IPAddress {
	e.t.Helper()
	eth0 := e.ifaces(systemID)["eth0"]
	path := "nodes/" + systemID + "/interfaces/" + id(eth0) + "/"
	e.must(http.StatusOK, http.MethodPut, path, e.admin, url.Values{"vlan": {itoa(f.vlan100.ID)}}, nil)
	e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"AUTO"}, "subnet": {itoa(f.subnet.ID)}}, nil)
	rows, err := e.srv.Store.ListIPAddresses(context.Background(), store.IPAddressFilter{SystemID: systemID})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range rows {
		if a.AllocType == store.AllocAuto {
			return a
		}
	}
	e.t.Fatalf("no AUTO link on %s: %+v", systemID, rows)
	return store.IPAddress{}
}

// TestReservedIPs: MAAS 3.6's reservedips/. A reservation keeps its
// address from every other MAC (an AUTO allocation skips it, a STATIC
// link is refused), the MAC's own AUTO link takes it, the racks' DHCP
// pins it; MAAS's refusals store nothing.
func TestReservedIPs(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		owner := e.addMachine("kept", "52:54:00:31:00:01", nil)
		other := e.addMachine("other", "52:54:00:31:00:02", nil)
		ownRow, otherRow := e.autoRow(f, owner.SystemID), e.autoRow(f, other.SystemID)

		// The address an allocation would pick first is the one reserved.
		probe, err := e.srv.Store.AllocateIP(ctx, store.IPAddress{SubnetID: f.subnet.ID, AllocType: store.AllocUserReserved, Owner: "admin"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.srv.Store.DeleteIPAddress(ctx, probe.ID); err != nil {
			t.Fatal(err)
		}
		first := probe.IP
		ri := decodeObject(t, e.answer(http.StatusOK, "POST", "reservedips/", e.admin, url.Values{"ip": {first},
			"mac_address": {"52:54:00:31:00:01"}, "comment": {"row 3"}}))
		for k, want := range map[string]string{"ip": first, "mac_address": "52:54:00:31:00:01", "comment": "row 3"} {
			wantJSON(t, "reserved ip", ri, k, strconv.Quote(want))
		}
		if sub(t, ri, "subnet")["id"] == nil || kindValue(sub(t, ri, "subnet")["id"]) != itoa(f.subnet.ID) {
			t.Fatalf("reserved ip's subnet: %v", ri["subnet"])
		}
		path := "reservedips/" + kindValue(ri["id"]) + "/"
		if got, _ := ri["resource_uri"].(string); !strings.HasSuffix(got, "/api/2.0/"+path) {
			t.Fatalf("resource_uri %s", got)
		}

		for _, c := range []struct {
			form  url.Values
			words string
		}{
			{url.Values{"mac_address": {"52:54:00:31:00:09"}}, "This field is required."},
			{url.Values{"ip": {"198.51.100.40"}, "mac_address": {"52:54:00:31:00:gg"}}, "'52:54:00:31:00:gg' is not a valid MAC address."},
			{url.Values{"ip": {"198.51.100.40"}}, "mac_address"},
			{url.Values{"ip": {"198.51.100.210"}, "mac_address": {"52:54:00:31:00:09"}},
				"The reserved IP 198.51.100.210 must be outside the dynamic range 198.51.100.200 - 198.51.100.250."},
			{url.Values{"ip": {"198.51.100.0"}, "mac_address": {"52:54:00:31:00:09"}, "subnet": {itoa(f.subnet.ID)}}, "The network address cannot be a reserved IP."},
			{url.Values{"ip": {"198.51.100.255"}, "mac_address": {"52:54:00:31:00:09"}}, "The broadcast address cannot be a reserved IP."},
			{url.Values{"ip": {"203.0.113.5"}, "mac_address": {"52:54:00:31:00:09"}}, "There is no subnet for 203.0.113.5. Create the subnet and try again."},
			{url.Values{"ip": {"192.0.2.5"}, "mac_address": {"52:54:00:31:00:09"}, "subnet": {itoa(f.subnet.ID)}}, "192.0.2.5 is not part of the subnet."},
			{url.Values{"ip": {first}, "mac_address": {"52:54:00:31:00:09"}}, "Reserved IP with this IP address already exists."},
			{url.Values{"ip": {"198.51.100.41"}, "mac_address": {"52:54:00:31:00:01"}}, "Reserved IP with this MAC address and Subnet already exists."},
		} {
			e.answerSays(400, "POST", "reservedips/", e.admin, c.form, c.words)
		}
		e.answerSays(403, "POST", "reservedips/", e.user, url.Values{"ip": {"198.51.100.42"}, "mac_address": {"52:54:00:31:00:09"}}, "")
		if n := e.count("reservedips/"); n != 1 {
			t.Fatalf("%d reserved IPs after refusals", n)
		}

		// Another MAC's AUTO link skips it; a STATIC link to it is refused.
		got, err := e.srv.Store.AllocateIP(ctx, otherRow)
		if err != nil || got.IP == first || got.IP == "" {
			t.Fatalf("the other machine's AUTO address: %q, %v (reserved: %s)", got.IP, err, first)
		}
		if _, err := e.srv.Store.CreateIPAddress(ctx, store.IPAddress{IP: first, SubnetID: f.subnet.ID, AllocType: store.AllocSticky,
			InterfaceID: otherRow.InterfaceID}); err == nil || !strings.Contains(err.Error(), "reserved for the MAC address 52:54:00:31:00:01") {
			t.Fatalf("a STATIC address of another MAC on the reserved IP: %v", err)
		}
		// Through the API, in MAAS's words.
		oeth := e.ifaces(other.SystemID)["eth0"]
		e.answerSays(400, http.MethodPost, "nodes/"+other.SystemID+"/interfaces/"+id(oeth)+"/", e.admin, url.Values{"op": {"link_subnet"},
			"mode": {"STATIC"}, "subnet": {itoa(f.subnet.ID)}, "ip_address": {first}},
			"The static IP "+first+" is already reserved for the MAC address 52:54:00:31:00:01.")
		// The MAC's own AUTO link takes it.
		if own, err := e.srv.Store.AllocateIP(ctx, ownRow); err != nil || own.IP != first {
			t.Fatalf("the reserving MAC's AUTO address: %q, %v; want %s", own.IP, err, first)
		}
		// An address another machine holds cannot be reserved for someone else;
		// its own MAC may reserve it.
		e.answerSays(400, "POST", "reservedips/", e.admin, url.Values{"ip": {got.IP}, "mac_address": {"52:54:00:31:00:09"}},
			"The ip "+got.IP+" is already in use by another machine.")
		e.must(http.StatusOK, "POST", "reservedips/", e.admin, url.Values{"ip": {got.IP}, "mac_address": {"52:54:00:31:00:02"}}, nil)

		// A reservation for a MAC no node has reaches the rack as a fixed
		// lease; the machines' own show once each.
		loose := decodeObject(t, e.answer(http.StatusOK, "POST", "reservedips/", e.admin, url.Values{"ip": {"198.51.100.77"},
			"mac_address": {"52-54-00-31-00-99"}}))
		hosts := func() []rack.Host {
			for _, s := range e.srv.Rack.Cache.Subnets() {
				if s.CIDR == "198.51.100.0/24" {
					return s.Hosts
				}
			}
			return nil
		}
		waitFor(t, "the reservation's fixed lease at the rack", 10*time.Second, func() bool {
			hs := hosts()
			n := 0
			for _, h := range hs {
				if h.MAC == "52:54:00:31:00:99" && h.IP == "198.51.100.77" {
					n++
				}
			}
			return n == 1 && len(hs) >= 3
		})

		// The maas CLI's multipart form, as it sends every POST.
		e.mustCLI(200, http.MethodPost, "reservedips/", e.admin, cliBody(cliPart{name: "ip", value: "198.51.100.78"},
			cliPart{name: "mac_address", value: "52:54:00:31:00:98"}))
		// Only the comment changes.
		wantJSON(t, "updated", decodeObject(t, e.answer(http.StatusOK, "PUT", path, e.admin, url.Values{"comment": {"row 4"}})), "comment", `"row 4"`)
		e.answerSays(400, "PUT", path, e.admin, url.Values{"ip": {"198.51.100.43"}, "comment": {"x"}}, "are immutable")
		e.answerSays(403, "PUT", path, e.user, url.Values{"comment": {"x"}}, "")
		wantJSON(t, "read", decodeObject(t, e.answer(http.StatusOK, "GET", path, e.user, nil)), "comment", `"row 4"`)
		e.must(http.StatusNoContent, "DELETE", "reservedips/"+kindValue(loose["id"])+"/", e.admin, nil, nil)
		waitFor(t, "the fixed lease gone", 10*time.Second, func() bool { return len(hosts()) == 3 })
		e.must(http.StatusNoContent, "DELETE", path, e.admin, nil, nil)
		e.answerSays(404, "GET", path, e.user, nil, "No ReservedIP matches the given query.")
	}, func(c *serve.Config) { c.BootHTTPAddr = "127.0.0.1:0" })
}

// TestReservedIPsRaceAllocations: reservations made while other MACs'
// AUTO addresses are allocated on the same subnet never share an
// address with them (on PostgreSQL the two run truly at once).
func TestReservedIPsRaceAllocations(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := newNetFixture(t, e)
		const n = 24
		var rows []store.IPAddress
		for i := range n {
			m := e.addMachine(fmt.Sprintf("race%d", i), fmt.Sprintf("52:54:00:32:00:%02x", i), nil)
			rows = append(rows, e.autoRow(f, m.SystemID))
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = e.srv.Store.AllocateIP(ctx, rows[i])
			}()
			go func() {
				defer wg.Done()
				// The lowest addresses, which the allocations chase.
				_, _ = e.srv.Store.CreateReservedIP(ctx, store.ReservedIP{SubnetID: f.subnet.ID, IP: fmt.Sprintf("198.51.100.%d", 2+i),
					MAC: fmt.Sprintf("52:54:00:33:00:%02x", i)})
			}()
		}
		wg.Wait()
		reserved, err := e.srv.Store.ListReservedIPs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := map[string]string{}
		addrs, err := e.srv.Store.ListIPAddresses(ctx, store.IPAddressFilter{SubnetID: f.subnet.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if a.IP != "" {
				held[a.IP] = a.Node.SystemID
			}
		}
		for _, r := range reserved {
			if h, ok := held[r.IP]; ok {
				t.Fatalf("%s is reserved for %s and held by %s", r.IP, r.MAC, h)
			}
		}
		if len(reserved)+len(held) < n {
			t.Fatalf("%d reservations and %d addresses; want at least %d in all", len(reserved), len(held), n)
		}
	})
}
