package api_test

import (
	"maps"
	"net/http"
	"net/url"
	"testing"

	"github.com/juju/gomaasapi/v2"

	"github.com/anvilmetal/anvil/internal/agentapi"
	"github.com/anvilmetal/anvil/internal/store"
)

// TestJujuCommissionedMachine is Juju's path through gomaasapi over
// machines commissioned through the agent, each with the default storage
// layout: list them, allocate one by space and storage, deploy it to
// Deployed, release it. The partitions and filesystems commissioning
// made have UUIDs of their own (gomaasapi refuses a filesystem without
// one), the same in every read, in the deploy's task and after release.
func TestJujuCommissionedMachine(t *testing.T) {
	eachDB(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		untagged, err := e.srv.Store.GetVLANByVID(ctx, store.DefaultFabricID, 0)
		if err != nil {
			t.Fatal(err)
		}
		space, err := e.srv.Store.CreateSpace(ctx, store.Space{Name: "db"})
		if err != nil {
			t.Fatal(err)
		}
		untagged.SpaceID = space.ID
		if _, err := e.srv.Store.UpdateVLAN(ctx, untagged); err != nil {
			t.Fatal(err)
		}
		subnet, err := e.srv.Store.CreateSubnet(ctx, store.Subnet{Name: "db-net", CIDR: "192.0.2.0/24", VLANID: untagged.ID, Managed: true})
		if err != nil {
			t.Fatal(err)
		}
		// Two machines in the space: only the bigger one has room for the
		// storage constraint.
		macA, macB := "52:54:00:3a:00:01", "52:54:00:3a:00:02"
		a := e.readyWith("juju-a", macA, storageInventory(macA, "uefi", disk("sda", "JA", 40*gib, true)))
		b := e.readyWith("juju-b", macB, storageInventory(macB, "bios", disk("sda", "JB", 20*gib, false)))
		nics := map[string]int64{}
		for _, m := range []struct{ sid, mac, ip string }{{a, macA, "192.0.2.20"}, {b, macB, "192.0.2.21"}} {
			for _, i := range e.ifaces(m.sid) {
				if i.MAC == m.mac {
					nics[m.sid] = i.ID
				}
			}
			path := "nodes/" + m.sid + "/interfaces/" + itoa(nics[m.sid]) + "/"
			e.must(http.StatusOK, http.MethodPut, path, e.admin, url.Values{"vlan": {itoa(untagged.ID)}}, nil)
			e.must(http.StatusOK, http.MethodPost, path, e.admin, url.Values{"op": {"link_subnet"}, "mode": {"STATIC"},
				"subnet": {itoa(subnet.ID)}, "ip_address": {m.ip}}, nil)
		}

		// Commissioning ran a script set: the machine names it, as MAAS.
		var shown struct {
			Commissioning *int64 `json:"current_commissioning_result_id"`
		}
		var current struct {
			ID int64 `json:"id"`
		}
		e.must(http.StatusOK, http.MethodGet, "machines/"+a+"/", e.user, nil, &shown)
		e.must(http.StatusOK, http.MethodGet, "nodes/"+a+"/results/current-commissioning/", e.user, nil, &current)
		if shown.Commissioning == nil || *shown.Commissioning != current.ID {
			t.Fatalf("current_commissioning_result_id %v, the current set is %d", shown.Commissioning, current.ID)
		}

		ctl, err := gomaasapi.NewController(gomaasapi.ControllerArgs{BaseURL: e.base, APIKey: e.user})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		spaces, err := ctl.Spaces()
		if err != nil {
			t.Fatalf("spaces: %v", err)
		}
		found := false
		for _, s := range spaces {
			found = found || s.Name() == "db" && len(s.Subnets()) == 1 && s.Subnets()[0].CIDR() == "192.0.2.0/24"
		}
		if !found {
			t.Fatalf("space db with its subnet not among %d spaces", len(spaces))
		}

		// uuids reads every machine as Juju does and returns each
		// partition's and filesystem's UUID by machine and path.
		uuids := func(want string) map[string]string {
			t.Helper()
			ms, err := ctl.Machines(gomaasapi.MachinesArgs{})
			if err != nil {
				t.Fatalf("list machines: %v", err)
			}
			if len(ms) != 2 {
				t.Fatalf("listed %d machines, want 2", len(ms))
			}
			out, seen := map[string]string{}, map[string]string{}
			put := func(key, u string) {
				if u == "" {
					t.Fatalf("%s has no UUID", key)
				}
				if other, ok := seen[u]; ok {
					t.Fatalf("%s and %s share UUID %s", key, other, u)
				}
				out[key], seen[u] = u, key
			}
			for _, m := range ms {
				if m.SystemID() == a && m.StatusName() != want {
					t.Fatalf("juju-a is %s, want %s", m.StatusName(), want)
				}
				root := false
				for _, bd := range m.BlockDevices() {
					for _, p := range bd.Partitions() {
						put(m.Hostname()+" "+p.Path(), p.UUID())
						if fs := p.FileSystem(); fs != nil {
							put(m.Hostname()+" "+p.Path()+" "+fs.Type()+" "+fs.MountPoint(), fs.UUID())
							root = root || fs.MountPoint() == "/"
						}
					}
				}
				if !root {
					t.Fatalf("%s has no root filesystem after commissioning", m.Hostname())
				}
			}
			return out
		}
		before := uuids("Ready")
		if again := uuids("Ready"); !maps.Equal(again, before) {
			t.Fatalf("UUIDs changed between reads:\n%v\n%v", before, again)
		}

		// Juju's allocation: an interface in the space, a root disk of at
		// least 30 GB.
		args := gomaasapi.AllocateMachineArgs{
			Interfaces: []gomaasapi.InterfaceSpec{{Label: "0", Space: "db"}},
			Storage:    []gomaasapi.StorageSpec{{Label: "root", Size: 30}},
		}
		m, matches, err := ctl.AllocateMachine(args)
		if err != nil {
			t.Fatalf("allocate: %v", err)
		}
		if m.SystemID() != a || m.StatusName() != "Allocated" {
			t.Fatalf("allocated %s (%s), want juju-a", m.Hostname(), m.StatusName())
		}
		if got := matches.Interfaces["0"]; len(got) != 1 || got[0].ID() != int(nics[a]) {
			t.Fatalf("interface matches %+v", matches.Interfaces)
		}
		if got := matches.Storage["root"]; len(got) != 1 || got[0].ID() != m.PhysicalBlockDevices()[0].ID() {
			t.Fatalf("storage matches %+v", matches.Storage)
		}
		if _, _, err := ctl.AllocateMachine(args); !gomaasapi.IsNoMatchError(err) {
			t.Fatalf("a second allocation with room for 30 GB: want no match, got %v", err)
		}

		// Deploy a root filesystem image: the task lays out the stored
		// configuration with the UUIDs the API showed.
		e.uploadTarball("ubuntu/jammy")
		if err := m.Start(gomaasapi.StartArgs{DistroSeries: "jammy"}); err != nil {
			t.Fatalf("deploy: %v", err)
		}
		r, err := e.agent("").Hello(ctx, agentapi.HelloRequest{Identity: ident("", macA), Purpose: "install", Enrol: e.enrol(a)})
		if err != nil || r.Action != agentapi.ActionProceed || r.Phase != "deploying" {
			t.Fatalf("hello: %+v %v", r, err)
		}
		tok := e.agent(r.Token)
		task, err := tok.Task(ctx)
		if err != nil || task.Storage == nil {
			t.Fatalf("task: %+v %v", task, err)
		}
		for _, f := range task.Storage.Filesystems {
			if key := "juju-a /dev/disk/by-dname/" + f.Device + " " + string(f.Type) + " " + f.MountPoint; before[key] != f.UUID {
				t.Fatalf("the task's %s has UUID %q, the API showed %q", key, f.UUID, before[key])
			}
		}
		if err := tok.Signal(ctx, agentapi.StatusInstalled, "", nil); err != nil {
			t.Fatal(err)
		}
		if code, body := osUp(t, tok.OSUpURL()); code != http.StatusOK {
			t.Fatalf("os-up: %d %s", code, body)
		}
		e.waitStatus(a, "Deployed")
		if got := uuids("Deployed"); !maps.Equal(got, before) {
			t.Fatalf("UUIDs changed by the deploy:\n%v\n%v", before, got)
		}

		if err := ctl.ReleaseMachines(gomaasapi.ReleaseMachinesArgs{SystemIDs: []string{a}}); err != nil {
			t.Fatalf("release: %v", err)
		}
		e.waitStatus(a, "Ready")
		if got := uuids("Ready"); !maps.Equal(got, before) {
			t.Fatalf("UUIDs changed by the release:\n%v\n%v", before, got)
		}
		// Released, it matches again.
		if m, _, err := ctl.AllocateMachine(args); err != nil || m.SystemID() != a {
			t.Fatalf("allocate after release: %v", err)
		}
	})
}
