package storetest

import (
	"context"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// testListMachineVersions: versions follow ListMachines's order and
// filters, and move on every change a reader could see, tags included.
func testListMachineVersions(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := newMachine("va", mac(1)), newMachine("vb", mac(2))
	for _, m := range []*machine.Machine{b, a} {
		if err := s.CreateMachine(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	versions := func(f store.MachineFilter) []store.MachineVersion {
		t.Helper()
		vs, err := s.ListMachineVersions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	vs := versions(store.MachineFilter{})
	if len(vs) != 2 || vs[0].SystemID != a.SystemID || vs[1].SystemID != b.SystemID || vs[0].Zone != "default" || vs[0].Pool != "default" {
		t.Fatalf("versions %+v, want va then vb in default zone and pool", vs)
	}
	if got := versions(store.MachineFilter{Hostnames: []string{"vb"}}); len(got) != 1 || got[0].SystemID != b.SystemID {
		t.Fatalf("filtered versions %+v", got)
	}
	step := func(what string, change func()) {
		t.Helper()
		before := versions(store.MachineFilter{SystemIDs: []string{a.SystemID}})[0].Version
		change()
		if after := versions(store.MachineFilter{SystemIDs: []string{a.SystemID}})[0].Version; after <= before {
			t.Fatalf("%s left the version at %d", what, after)
		}
	}
	step("update", func() {
		if _, err := s.UpdateMachine(ctx, a.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
			m.Description = "moved"
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := s.CreateTag(ctx, store.Tag{Name: "gpu"}); err != nil {
		t.Fatal(err)
	}
	step("tagging", func() {
		if err := s.TagMachines(ctx, "gpu", []string{a.SystemID}, nil); err != nil {
			t.Fatal(err)
		}
	})
	step("renaming its tag", func() {
		if _, err := s.UpdateTag(ctx, "gpu", store.Tag{Name: "gpu2"}); err != nil {
			t.Fatal(err)
		}
	})
	step("deleting its tag", func() {
		if err := s.DeleteTag(ctx, "gpu2"); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := s.UpdateZone(ctx, "default", store.Zone{Name: "default", Description: "x"}); err != nil {
		t.Fatal(err)
	}
}
