package api_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/juju/gomaasapi/v2"

	"github.com/anvilmetal/anvil/internal/machine"
)

// ready commissions a machine and has Anvil report commissioning done, as
// the ephemeral environment's signal would.
func (e *env) ready(id string) {
	e.t.Helper()
	e.must(http.StatusOK, http.MethodPost, "machines/"+id+"/?op=commission", e.admin, nil, nil)
	if _, _, err := e.srv.Service.Act(context.Background(), machine.SystemActor, id, machine.Input{Action: machine.Succeed}); err != nil {
		e.t.Fatal(err)
	}
	e.waitStatus(id, "Ready")
}

// TestMAASClient drives Anvil with the MAAS Go client that Juju uses.
func TestMAASClient(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		e.must(http.StatusOK, http.MethodPost, "zones/", e.admin, url.Values{"name": {"rack2"}, "description": {"second rack"}}, nil)
		e.must(http.StatusOK, http.MethodPost, "resourcepools/", e.admin, url.Values{"name": {"gpu"}}, nil)
		a := e.addMachine("node-a", "52:54:00:00:00:0a", nil)
		b := e.addMachine("node-b", "52:54:00:00:00:0b", url.Values{"zone": {"rack2"}, "pool": {"gpu"}})
		c := e.addMachine("node-c", "52:54:00:00:00:0c", nil)
		for _, m := range []apiMachine{a, b, c} {
			e.ready(m.SystemID)
		}
		e.must(http.StatusOK, http.MethodPost, "tags/", e.admin, url.Values{"name": {"fast"}}, nil)
		e.must(http.StatusOK, http.MethodPost, "tags/fast/?op=update_nodes", e.admin, url.Values{"add": {b.SystemID}}, nil)

		ctl, err := gomaasapi.NewController(gomaasapi.ControllerArgs{BaseURL: e.base, APIKey: e.admin})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		zones, err := ctl.Zones()
		if err != nil {
			t.Fatal(err)
		}
		if got := zoneNames(zones); len(got) != 2 || got[0] != "default" || got[1] != "rack2" {
			t.Fatalf("zones %v", got)
		}
		pools, err := ctl.Pools()
		if err != nil {
			t.Fatal(err)
		}
		if len(pools) != 2 {
			t.Fatalf("pools: %d, want 2", len(pools))
		}

		all, err := ctl.Machines(gomaasapi.MachinesArgs{})
		if err != nil || len(all) != 3 {
			t.Fatalf("list: %d machines, %v", len(all), err)
		}
		byHost, err := ctl.Machines(gomaasapi.MachinesArgs{Hostnames: []string{"node-b"}})
		if err != nil || len(byHost) != 1 || byHost[0].SystemID() != b.SystemID {
			t.Fatalf("filter by hostname: %v %v", byHost, err)
		}
		if byHost[0].Zone().Name() != "rack2" || byHost[0].Pool().Name() != "gpu" || byHost[0].StatusName() != "Ready" {
			t.Fatalf("node-b reads as zone %s pool %s status %s", byHost[0].Zone().Name(), byHost[0].Pool().Name(), byHost[0].StatusName())
		}
		byMAC, err := ctl.Machines(gomaasapi.MachinesArgs{MACAddresses: []string{"52:54:00:00:00:0c"}})
		if err != nil || len(byMAC) != 1 || byMAC[0].SystemID() != c.SystemID {
			t.Fatalf("filter by MAC: %v %v", byMAC, err)
		}
		byZone, err := ctl.Machines(gomaasapi.MachinesArgs{Zone: "rack2"})
		if err != nil || len(byZone) != 1 {
			t.Fatalf("filter by zone: %d %v", len(byZone), err)
		}
		byID, err := ctl.Machines(gomaasapi.MachinesArgs{SystemIDs: []string{a.SystemID, c.SystemID}})
		if err != nil || len(byID) != 2 {
			t.Fatalf("filter by ids: %d %v", len(byID), err)
		}

		// Allocate by tag and by zone, then nothing is left that matches.
		got, _, err := ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{Tags: []string{"fast"}})
		if err != nil || got.SystemID() != b.SystemID {
			t.Fatalf("allocate tags=fast: %v %v", got, err)
		}
		if _, _, err := ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{Zone: "rack2"}); !gomaasapi.IsNoMatchError(err) {
			t.Fatalf("second allocate in rack2: want no-match, got %v", err)
		}
		if got.StatusName() != "Allocated" {
			t.Fatalf("allocated machine is %s", got.StatusName())
		}
		e.uploadImage("ubuntu/jammy", "amd64/generic")
		if err := got.Start(gomaasapi.StartArgs{DistroSeries: "jammy"}); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		if got.StatusName() != "Deploying" {
			t.Fatalf("after deploy: %s", got.StatusName())
		}
		if err := ctl.ReleaseMachines(gomaasapi.ReleaseMachinesArgs{SystemIDs: []string{b.SystemID}}); err != nil {
			t.Fatalf("release: %v", err)
		}
		// Manual power off completes at once, which ends Releasing.
		if m := e.waitStatus(b.SystemID, "Ready"); m.Owner != nil {
			t.Fatalf("released machine still owned by %s", *m.Owner)
		}
		err = ctl.ReleaseMachines(gomaasapi.ReleaseMachinesArgs{SystemIDs: []string{"nope00"}})
		if !gomaasapi.IsBadRequestError(err) {
			t.Fatalf("release of unknown machine: %v", err)
		}
	})
}

func zoneNames(zs []gomaasapi.Zone) []string {
	var out []string
	for _, z := range zs {
		out = append(out, z.Name())
	}
	sort.Strings(out)
	return out
}

// TestMAASClientOwnerData: Juju tags the machines it allocates with
// gomaasapi's SetOwnerData and reads them back with OwnerData.
func TestMAASClientOwnerData(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		id := e.addMachine("juju-0", "52:54:00:00:05:0a", nil).SystemID
		e.ready(id)
		ctl, err := gomaasapi.NewController(gomaasapi.ControllerArgs{BaseURL: e.base, APIKey: e.user})
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := ctl.AllocateMachine(gomaasapi.AllocateMachineArgs{SystemId: id})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetOwnerData(map[string]string{"juju-model-uuid": "2f1c", "juju-machine-id": "0"}); err != nil {
			t.Fatalf("SetOwnerData: %v", err)
		}
		if err := m.SetOwnerData(map[string]string{"juju-machine-id": ""}); err != nil {
			t.Fatalf("SetOwnerData removing a key: %v", err)
		}
		if got := m.OwnerData(); len(got) != 1 || got["juju-model-uuid"] != "2f1c" {
			t.Fatalf("answered owner data %v", got)
		}
		ms, err := ctl.Machines(gomaasapi.MachinesArgs{SystemIDs: []string{id}})
		if err != nil || len(ms) != 1 {
			t.Fatalf("read back: %v %v", ms, err)
		}
		if got := ms[0].OwnerData(); len(got) != 1 || got["juju-model-uuid"] != "2f1c" {
			t.Fatalf("stored owner data %v", got)
		}
	})
}
