package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/store"
)

// The controllers page shows each rack with what it reported (addresses,
// the VLANs it serves and how, BMC networks, its services' health), says
// which are dead or not enrolled, and lets an administrator delete one.
func TestControllersPage(t *testing.T) { eachDB(t, testControllersPage, nil) }

func testControllersPage(t *testing.T, s *site) {
	ctx := context.Background()
	st := s.srv.Store
	c, csrf, _ := s.asAda("ctl-1", 5)
	secret, err := st.CreateRackSecret(ctx, "ada", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := st.EnrolRack(ctx, secret, store.Rack{Hostname: "rack-east", Address: "192.0.2.10", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := json.Marshal(rack.Status{
		Interfaces:  []rack.StatusInterface{{Name: "eth0", MTU: 1500, Up: true, Addresses: []string{"192.0.2.10/24"}}},
		BMCNetworks: []string{"198.51.100.0/24"},
		Services:    []rack.ServiceStatus{{Name: rack.ServiceDHCP, Status: rack.StatusRunning}, {Name: rack.ServiceDNS, Status: rack.StatusDead, Info: "port 53 taken"}},
	})
	if err := st.ReportRack(ctx, store.Rack{SystemID: cred.RackID, Hostname: "rack-east", Address: "192.0.2.10", Version: "1.2.3", Enrolled: true, Report: string(rep)}); err != nil {
		t.Fatal(err)
	}
	s.mustDo(c, "POST", "/MAAS/api/2.0/subnets/", map[string][]string{"cidr": {"192.0.2.0/24"}}, csrf, http.StatusOK)
	if err := st.TouchRack(ctx, store.Rack{SystemID: "oldrck", Hostname: "rack-gone", Address: "192.0.2.99", Seen: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}

	page := s.page(c, "/MAAS/controllers")
	mustContain(t, page, `id="rack-`+cred.RackID+`"`, "rack-east", "1.2.3", "192.0.2.10", "fabric-0.untagged (connected)", "198.51.100.0/24",
		`svc-running" title="">dhcpd: running`, `title="port 53 taken">dns_rack: dead`, "rack-gone", "(not enrolled)", `badge bad">dead`,
		`data-api="DELETE rackcontrollers/`+cred.RackID+`/"`, `href="/MAAS/controllers" class="here"`)

	bob, _ := s.asBob()
	if p := s.page(bob, "/MAAS/controllers"); !strings.Contains(p, "rack-east") || strings.Contains(p, `data-api="DELETE rackcontrollers/`) {
		t.Fatal("a non-admin sees no racks, or is offered to delete one")
	}

	s.mustDo(c, "DELETE", "/MAAS/api/2.0/rackcontrollers/"+cred.RackID+"/", nil, csrf, http.StatusNoContent)
	if p := s.page(c, "/MAAS/controllers"); strings.Contains(p, "rack-east") {
		t.Fatal("a deleted rack is still listed")
	}
	if _, err := st.RackCredentialByToken(ctx, cred.TokenKey); err == nil {
		t.Fatal("deleting the rack from the page left its credential working")
	}
}
