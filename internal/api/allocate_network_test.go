package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gmc "github.com/canonical/gomaasclient/client"
	"github.com/canonical/gomaasclient/entity"
	"github.com/juju/gomaasapi/v2"

	"github.com/anvilmetal/anvil/internal/store"
)

// spacedSite: fabric-0's untagged VLAN in space "db" with 192.0.2.0/24,
// its VLAN 100 in space "web" with 198.51.100.0/24 (newNetFixture's), and
// fabric "edge" (class 1g) whose untagged VLAN has 198.18.0.0/24 and no
// space. Machine "db1" has eth0 on db's subnet, "web1" on web's, "edge1"
// on edge's, each with a STATIC address; all three are Ready.
type spacedSite struct {
	db1, web1, edge1 apiMachine
	eth0             map[string]int64 // each machine's eth0 id, by hostname
}

func newSpacedSite(t *testing.T, e *env) spacedSite {
	t.Helper()
	ctx := context.Background()
	f := newNetFixture(t, e)
	db, err := e.srv.Store.CreateSpace(ctx, store.Space{Name: "db"})
	if err != nil {
		t.Fatal(err)
	}
	web, err := e.srv.Store.CreateSpace(ctx, store.Space{Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	f.untagged.SpaceID, f.vlan100.SpaceID = db.ID, web.ID
	for _, v := range []store.VLAN{f.untagged, f.vlan100} {
		if _, err := e.srv.Store.UpdateVLAN(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	dbNet, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "db-net", CIDR: "192.0.2.0/24", VLANID: f.untagged.ID, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	edge, err := e.srv.Store.CreateFabric(ctx, store.Fabric{Name: "edge", ClassType: "1g"})
	if err != nil {
		t.Fatal(err)
	}
	edgeVLAN, err := e.srv.Store.GetVLANByVID(ctx, edge.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	edgeNet, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "edge-net", CIDR: "198.18.0.0/24", VLANID: edgeVLAN.ID, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	s := spacedSite{eth0: map[string]int64{}}
	for _, m := range []struct {
		host, mac string
		vlan      store.VLAN
		subnet    store.Subnet
		ip        string
		into      *apiMachine
	}{
		{"db1", "52:54:00:29:00:01", f.untagged, dbNet, "192.0.2.10", &s.db1},
		{"web1", "52:54:00:29:00:02", f.vlan100, f.subnet, "198.51.100.10", &s.web1},
		{"edge1", "52:54:00:29:00:03", edgeVLAN, edgeNet, "198.18.0.10", &s.edge1},
	} {
		*m.into = e.addMachine(m.host, m.mac, nil)
		eth0 := e.ifaces(m.into.SystemID)["eth0"]
		path := "nodes/" + m.into.SystemID + "/interfaces/" + id(eth0) + "/"
		e.must(http.StatusOK, http.MethodPut, path, e.admin, url.Values{"vlan": {itoa(m.vlan.ID)}}, nil)
		e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
			"subnet": {itoa(m.subnet.ID)}, "ip_address": {m.ip}}, nil)
		e.ready(m.into.SystemID)
		s.eth0[m.host] = eth0.ID
	}
	return s
}

// allocated is what an allocation answer says of the machine and of how
// it matched.
type allocated struct {
	SystemID    string `json:"system_id"`
	Hostname    string `json:"hostname"`
	Constraints struct {
		Interfaces map[string][]int64 `json:"interfaces"`
	} `json:"constraints_by_type"`
}

// TestAllocateNetworkConstraints allocates by MAAS's interfaces map and
// machine-wide network constraints over HTTP, and checks MAAS's answers
// to what names nothing.
func TestAllocateNetworkConstraints(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		s := newSpacedSite(t, e)
		dry := func(form url.Values) allocated {
			t.Helper()
			form.Set("dry_run", "true")
			var a allocated
			e.must(http.StatusOK, http.MethodPost, "machines/?op=allocate", e.admin, form, &a)
			return a
		}
		for _, tc := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"interfaces": {"a:space=web"}}, "web1"},
			{url.Values{"interfaces": {"a:not_space=db,fabric=fabric-0"}}, "web1"},
			{url.Values{"interfaces": {"a:fabric_class=1g"}}, "edge1"},
			{url.Values{"interfaces": {"a:subnet=cidr:192.0.2.0/24,ip=192.0.2.10"}}, "db1"},
			{url.Values{"interfaces": {"a:vid=100,name=eth0"}}, "web1"},
			{url.Values{"subnets": {"space:db"}}, "db1"},
			{url.Values{"not_subnets": {"space:db", "198.51.100.0/24"}}, "edge1"},
			{url.Values{"fabrics": {"edge"}}, "edge1"},
			{url.Values{"not_fabrics": {"fabric-0"}}, "edge1"},
			{url.Values{"fabric_classes": {"1g"}}, "edge1"},
			{url.Values{"not_fabric_classes": {"1g"}, "not_subnets": {"db-net"}}, "web1"},
			{url.Values{"vlans": {"vid:100"}}, "web1"},
			{url.Values{"not_vlans": {"fabric:edge", "untagged"}}, "web1"},
			{url.Values{"spaces": {"db"}}, "db1"},
			{url.Values{"not_spaces": {"db", "web"}}, "edge1"},
		} {
			if got := dry(tc.form); got.Hostname != tc.want {
				t.Errorf("%v: allocated %s, want %s", tc.form, got.Hostname, tc.want)
			}
		}
		a := dry(url.Values{"interfaces": {"pub:space=web;any:fabric=fabric-0"}})
		if a.Hostname != "web1" || len(a.Constraints.Interfaces) != 2 ||
			len(a.Constraints.Interfaces["pub"]) != 1 || a.Constraints.Interfaces["pub"][0] != s.eth0["web1"] {
			t.Fatalf("constraints_by_type: %+v", a)
		}

		// Refusals, in MAAS's words, and no machine allocated by them.
		e.wantFieldError(http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:colour=red"}},
			"interfaces", "Unknown interfaces constraint: 'colour'")
		e.wantFieldError(http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a=b"}},
			"interfaces", "Malformed constraint: 'a=b'")
		e.wantFieldError(http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:mode=static"}},
			"interfaces", "The only valid value for 'mode' is 'unconfigured'.")
		e.wantFieldError(http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"subnets": {"nosuch"}},
			"subnets", "No matching subnets found.")
		e.wantFieldError(http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"not_vlans": {"nosuch"}},
			"not_vlans", "No matching vlans found.")
		e.answerSays(http.StatusNotFound, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:space=nosuch"}},
			"No Space matches the given query.")
		e.answerSays(http.StatusNotFound, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"not_subnets": {"space:nosuch"}},
			"No Space matches the given query.")
		e.answerSays(http.StatusConflict, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:space=db,fabric=edge"}},
			"No available machine matches constraints: interfaces=a%3Aspace%3Ddb%2Cfabric%3Dedge")
		e.answerSays(http.StatusConflict, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"fabrics": {"nosuch"}},
			"No available machine matches constraints")
		for _, m := range []apiMachine{s.db1, s.web1, s.edge1} {
			if got := e.machine(m.SystemID); got.StatusName != "Ready" {
				t.Fatalf("%s is %s after refused allocations", m.Hostname, got.StatusName)
			}
		}

		// A real allocation takes the matching machine; the next one that
		// asks for the same finds none.
		var got allocated
		e.must(http.StatusOK, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:space=db"}}, &got)
		if got.SystemID != s.db1.SystemID || got.Constraints.Interfaces["a"][0] != s.eth0["db1"] {
			t.Fatalf("allocate: %+v", got)
		}
		e.answerSays(http.StatusConflict, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"interfaces": {"a:space=db"}},
			"No available machine matches constraints")
	})
}

// TestAllocateSpacesJuju allocates as Juju's space-aware provisioning
// does, through gomaasapi: an interface in one space, none in another,
// and reads which interface matched.
func TestAllocateSpacesJuju(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		s := newSpacedSite(t, e)
		ctl, err := gomaasapi.NewController(gomaasapi.ControllerArgs{BaseURL: e.base, APIKey: e.admin})
		if err != nil {
			t.Fatal(err)
		}
		m, matches, err := ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{
			Interfaces: []gomaasapi.InterfaceSpec{{Label: "a", Space: "web"}}, NotSpace: []string{"db"}})
		if err != nil {
			t.Fatal(err)
		}
		if m.SystemID() != s.web1.SystemID {
			t.Fatalf("allocated %s, want web1", m.Hostname())
		}
		got := matches.Interfaces["a"]
		if len(got) != 1 || got[0].ID() != int(s.eth0["web1"]) || got[0].VLAN() == nil || got[0].VLAN().VID() != 100 {
			t.Fatalf("interface constraints: %+v", matches.Interfaces)
		}
		if _, _, err := ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{
			Interfaces: []gomaasapi.InterfaceSpec{{Label: "a", Space: "db"}}, NotSpace: []string{"db"}}); !gomaasapi.IsNoMatchError(err) {
			t.Fatalf("space and not that space: want no-match, got %v", err)
		}
		_, _, err = ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{Interfaces: []gomaasapi.InterfaceSpec{{Label: "a", Space: "nosuch"}}})
		if se, ok := err.(gomaasapi.ServerError); ok || err == nil {
			t.Fatalf("unknown space: %v", se)
		}
		if !strings.Contains(err.Error(), "No Space matches the given query.") {
			t.Fatalf("unknown space: %v", err)
		}
	})
}

// TestAllocateNetworkGomaasclient allocates with terraform-provider-maas's
// client and its Interfaces, NotSubnets and Fabrics parameters.
func TestAllocateNetworkGomaasclient(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		s := newSpacedSite(t, e)
		c, err := gmc.GetClient(strings.TrimSuffix(e.base, "/"), e.admin, "2.0")
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.Machines.Allocate(&entity.MachineAllocateParams{Interfaces: "n:subnet=space:web", DryRun: true})
		if err != nil || m.SystemID != s.web1.SystemID {
			t.Fatalf("interfaces: %+v %v", m, err)
		}
		m, err = c.Machines.Allocate(&entity.MachineAllocateParams{NotSubnets: []string{"space:web", "edge-net"}, Fabrics: []string{"fabric-0"}})
		if err != nil || m.SystemID != s.db1.SystemID || m.StatusName != "Allocated" {
			t.Fatalf("not_subnets and fabrics: %+v %v", m, err)
		}
		if _, err := c.Machines.Allocate(&entity.MachineAllocateParams{Fabrics: []string{"fabric-0"}, NotSubnets: []string{"space:web"}}); err == nil ||
			!strings.Contains(err.Error(), "409") {
			t.Fatalf("second allocation: %v", err)
		}
		var raw json.RawMessage
		e.must(http.StatusOK, http.MethodPost, "machines/?op=allocate", e.admin, url.Values{"fabric_classes": {"1g"}, "dry_run": {"true"}}, &raw)
		if !strings.Contains(string(raw), `"hostname":"edge1"`) {
			t.Fatalf("fabric_classes: %s", raw)
		}
	})
}
