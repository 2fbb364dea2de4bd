package storetest

import (
	"fmt"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// fixture creates four machines that differ in every filtered field, in an
// order other than the hostname order, and returns them by hostname.
func fixture(t *testing.T, s store.Store) map[string]*machine.Machine {
	ctx := t.Context()
	if _, err := s.CreateZone(ctx, store.Zone{Name: "z1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreatePool(ctx, store.Pool{Name: "p1"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gpu", "ssd"} {
		if _, err := s.CreateTag(ctx, store.Tag{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	type spec struct {
		host, zone, pool, owner, arch string
		status                        machine.Status
		cpu                           int
		mem                           int64
		tags, macs                    []string
	}
	specs := []spec{
		{"c-node", "z1", "", "bob", "amd64/hwe", machine.Deployed, 16, 65536, []string{"ssd"}, []string{mac(4)}},
		{"a-node", "", "", "", "amd64/generic", machine.Ready, 4, 8192, []string{"gpu"}, []string{mac(1)}},
		{"d-node", "", "p1", "", "i386/generic", machine.Ready, 2, 2048, nil, nil},
		{"b-node", "z1", "p1", "alice", "arm64/generic", machine.Allocated, 8, 16384, []string{"gpu", "ssd"}, []string{mac(2), mac(3)}},
	}
	out := map[string]*machine.Machine{}
	for _, sp := range specs {
		m := newMachine(sp.host, sp.macs...)
		m.Zone, m.Pool, m.Owner, m.Architecture, m.Status = sp.zone, sp.pool, sp.owner, sp.arch, sp.status
		m.CPUCount, m.Memory, m.Tags = sp.cpu, sp.mem, sp.tags
		out[sp.host] = create(t, s, m)
	}
	return out
}

func testListFilters(t *testing.T, s store.Store) {
	ms := fixture(t, s)
	id := func(h string) string { return ms[h].SystemID }
	cases := []struct {
		name string
		f    store.MachineFilter
		want []string
	}{
		{"all", store.MachineFilter{}, []string{"a-node", "b-node", "c-node", "d-node"}},
		{"system ids", store.MachineFilter{SystemIDs: []string{id("d-node"), id("b-node")}}, []string{"b-node", "d-node"}},
		{"hostnames", store.MachineFilter{Hostnames: []string{"c-node", "nosuch"}}, []string{"c-node"}},
		{"mac", store.MachineFilter{MACs: []string{mac(3)}}, []string{"b-node"}},
		{"macs", store.MachineFilter{MACs: []string{mac(1), mac(3), mac(2)}}, []string{"a-node", "b-node"}},
		{"status", store.MachineFilter{Statuses: []machine.Status{machine.Ready}}, []string{"a-node", "d-node"}},
		{"statuses", store.MachineFilter{Statuses: []machine.Status{machine.Ready, machine.Deployed}}, []string{"a-node", "c-node", "d-node"}},
		{"zone", store.MachineFilter{Zones: []string{"z1"}}, []string{"b-node", "c-node"}},
		{"zones", store.MachineFilter{Zones: []string{"z1", "default"}}, []string{"a-node", "b-node", "c-node", "d-node"}},
		{"pool", store.MachineFilter{Pools: []string{"p1"}}, []string{"b-node", "d-node"}},
		{"owners", store.MachineFilter{Owners: []string{"alice", "bob"}}, []string{"b-node", "c-node"}},
		{"arch family", store.MachineFilter{Arch: "amd64"}, []string{"a-node", "c-node"}},
		{"arch exact", store.MachineFilter{Arch: "amd64/generic"}, []string{"a-node"}},
		{"arch other", store.MachineFilter{Arch: "arm64"}, []string{"b-node"}},
		{"tag", store.MachineFilter{Tags: []string{"gpu"}}, []string{"a-node", "b-node"}},
		{"all tags", store.MachineFilter{Tags: []string{"gpu", "ssd"}}, []string{"b-node"}},
		{"repeated tag", store.MachineFilter{Tags: []string{"gpu", "gpu"}}, []string{"a-node", "b-node"}},
		{"unknown tag", store.MachineFilter{Tags: []string{"nosuch"}}, nil},
		{"not tag", store.MachineFilter{NotTags: []string{"ssd"}}, []string{"a-node", "d-node"}},
		{"not tags", store.MachineFilter{NotTags: []string{"gpu", "ssd"}}, []string{"d-node"}},
		{"min cpu", store.MachineFilter{MinCPU: 8}, []string{"b-node", "c-node"}},
		{"min memory", store.MachineFilter{MinMemory: 16384}, []string{"b-node", "c-node"}},
		{"combined", store.MachineFilter{Zones: []string{"z1"}, Statuses: []machine.Status{machine.Deployed}}, []string{"c-node"}},
		{"tags and zone", store.MachineFilter{Tags: []string{"gpu"}, Zones: []string{"default"}, NotTags: []string{"ssd"}}, []string{"a-node"}},
		{"hostile value", store.MachineFilter{Hostnames: []string{"x' OR '1'='1"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			equalStrings(t, "hostnames", hostnames(list(t, s, tc.f)), tc.want)
		})
	}

	// Listed machines carry their interfaces and tags, as GetMachine's do.
	for _, m := range list(t, s, store.MachineFilter{WithPowerParams: true}) {
		sameMachine(t, m, get(t, s, m.SystemID))
	}
}

func testListVisibility(t *testing.T, s store.Store) {
	fixture(t, s)
	for user, want := range map[string][]string{
		"alice": {"a-node", "b-node", "d-node"},
		"bob":   {"a-node", "c-node", "d-node"},
		"carol": {"a-node", "d-node"},
		"":      {"a-node", "b-node", "c-node", "d-node"},
	} {
		equalStrings(t, "visible to "+user, hostnames(list(t, s, store.MachineFilter{VisibleTo: user})), want)
	}
	equalStrings(t, "alice's ready", hostnames(list(t, s, store.MachineFilter{VisibleTo: "alice", Owners: []string{"alice"}})), []string{"b-node"})
}

func testListPowerParamsAndLimit(t *testing.T, s store.Store) {
	ms := fixture(t, s)
	for _, m := range list(t, s, store.MachineFilter{}) {
		if m.PowerParams != nil {
			t.Fatalf("%s: power parameters loaded without WithPowerParams", m.Hostname)
		}
	}
	for _, m := range list(t, s, store.MachineFilter{WithPowerParams: true}) {
		if m.PowerParams["power_pass"] != Secret || len(m.PowerParams) != len(ms[m.Hostname].PowerParams) {
			t.Fatalf("%s: power parameters = %v", m.Hostname, m.PowerParams)
		}
	}
	equalStrings(t, "limit 2", hostnames(list(t, s, store.MachineFilter{Limit: 2})), []string{"a-node", "b-node"})
	equalStrings(t, "filtered limit", hostnames(list(t, s, store.MachineFilter{Limit: 1, Pools: []string{"p1"}})), []string{"b-node"})
}

// testListMany lists more machines than a store may pass as a parameter
// list, to exercise however it fetches interfaces and tags for many.
func testListMany(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.CreateTag(ctx, store.Tag{Name: "third"}); err != nil {
		t.Fatal(err)
	}
	const n = 450
	for i := range n {
		m := newMachine(fmt.Sprintf("host%04d", i), mac(2*i), mac(2*i+1))
		if i%3 == 0 {
			m.Tags = []string{"third"}
		}
		create(t, s, m)
	}
	check := func(ms []machine.Machine, want int) {
		t.Helper()
		if len(ms) != want {
			t.Fatalf("listed %d machines, want %d", len(ms), want)
		}
		for k, m := range ms {
			var i int
			fmt.Sscanf(m.Hostname, "host%04d", &i)
			if len(m.Interfaces) != 2 || m.Interfaces[0].MAC != mac(2*i) || m.Interfaces[1].MAC != mac(2*i+1) {
				t.Fatalf("%s has interfaces %+v", m.Hostname, m.Interfaces)
			}
			if tagged := len(m.Tags) == 1; tagged != (i%3 == 0) {
				t.Fatalf("%s has tags %v", m.Hostname, m.Tags)
			}
			if k > 0 && ms[k-1].Hostname >= m.Hostname {
				t.Fatalf("not ordered by hostname at %d", k)
			}
		}
	}
	check(list(t, s, store.MachineFilter{}), n)
	check(list(t, s, store.MachineFilter{Limit: 420}), 420)
	check(list(t, s, store.MachineFilter{Tags: []string{"third"}}), n/3)
}
