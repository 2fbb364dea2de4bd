package storetest

import (
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// groupAPI views zones or pools through one set of functions, since the
// rules for both are the same.
type groupAPI struct {
	kind   string
	list   func() ([]store.Zone, error)
	get    func(name string) (store.Zone, error)
	create func(z store.Zone) (store.Zone, error)
	update func(name string, z store.Zone) (store.Zone, error)
	delete func(name string) error
	place  func(m *machine.Machine, name string)
}

func testZones(t *testing.T, s store.Store) {
	ctx := t.Context()
	testGroup(t, s, groupAPI{
		kind:   "zone",
		list:   func() ([]store.Zone, error) { return s.ListZones(ctx) },
		get:    func(n string) (store.Zone, error) { return s.GetZone(ctx, n) },
		create: func(z store.Zone) (store.Zone, error) { return s.CreateZone(ctx, z) },
		update: func(n string, z store.Zone) (store.Zone, error) { return s.UpdateZone(ctx, n, z) },
		delete: func(n string) error { return s.DeleteZone(ctx, n) },
		place:  func(m *machine.Machine, n string) { m.Zone = n },
	})
}

func testPools(t *testing.T, s store.Store) {
	ctx := t.Context()
	conv := func(p store.Pool, err error) (store.Zone, error) { return store.Zone(p), err }
	testGroup(t, s, groupAPI{
		kind: "pool",
		list: func() ([]store.Zone, error) {
			ps, err := s.ListPools(ctx)
			var out []store.Zone
			for _, p := range ps {
				out = append(out, store.Zone(p))
			}
			return out, err
		},
		get:    func(n string) (store.Zone, error) { return conv(s.GetPool(ctx, n)) },
		create: func(z store.Zone) (store.Zone, error) { return conv(s.CreatePool(ctx, store.Pool(z))) },
		update: func(n string, z store.Zone) (store.Zone, error) { return conv(s.UpdatePool(ctx, n, store.Pool(z))) },
		delete: func(n string) error { return s.DeletePool(ctx, n) },
		place:  func(m *machine.Machine, n string) { m.Pool = n },
	})
}

func testGroup(t *testing.T, s store.Store, g groupAPI) {
	def, err := g.get("default")
	if err != nil || def.ID == 0 || def.Name != "default" {
		t.Fatalf("default %s = %+v, %v", g.kind, def, err)
	}
	_, err = g.get("nosuch")
	wantErrIs(t, err, store.ErrNotFound)

	rack, err := g.create(store.Zone{Name: "rack-b", Description: "second rack"})
	if err != nil || rack.ID == 0 {
		t.Fatalf("create = %+v, %v", rack, err)
	}
	if _, err := g.create(store.Zone{Name: "rack-a"}); err != nil {
		t.Fatal(err)
	}
	_, err = g.create(store.Zone{Name: "rack-b"})
	wantConflict(t, err, g.kind+" name rack-b", "")
	if _, err := g.create(store.Zone{}); err == nil {
		t.Fatal("an empty name was accepted")
	}
	all, err := g.list()
	if err != nil || len(all) != 3 || all[0].Name != "default" || all[1].Name != "rack-a" || all[2] != rack {
		t.Fatalf("list = %+v, %v", all, err)
	}

	// Update: description alone, then a rename.
	got, err := g.update("rack-b", store.Zone{Description: "new text"})
	if err != nil || got.Name != "rack-b" || got.Description != "new text" || got.ID != rack.ID {
		t.Fatalf("update description = %+v, %v", got, err)
	}
	got, err = g.update("rack-b", store.Zone{Name: "rack-c", Description: "moved"})
	if err != nil || got.Name != "rack-c" || got.ID != rack.ID {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	if g2, err := g.get("rack-c"); err != nil || g2 != got {
		t.Fatalf("get after rename = %+v, %v", g2, err)
	}
	_, err = g.update("rack-c", store.Zone{Name: "rack-a"})
	wantConflict(t, err, g.kind+" name rack-a", "")
	_, err = g.update("nosuch", store.Zone{Description: "x"})
	wantErrIs(t, err, store.ErrNotFound)
	_, err = g.update("default", store.Zone{Name: "other"})
	wantErrIs(t, err, store.ErrInUse)
	if _, err := g.update("default", store.Zone{Description: "the usual"}); err != nil {
		t.Fatalf("describing default: %v", err)
	}

	// Machines follow a rename, and keep a group from being deleted.
	m := newMachine("node1")
	g.place(m, "rack-c")
	create(t, s, m)
	got, err = g.update("rack-c", store.Zone{Name: "rack-d"})
	if err != nil {
		t.Fatal(err)
	}
	if gm := get(t, s, m.SystemID); gm.Zone != "rack-d" && gm.Pool != "rack-d" {
		t.Fatalf("machine not in the renamed %s: %s/%s", g.kind, gm.Zone, gm.Pool)
	}
	err = g.delete("rack-d")
	wantErrIs(t, err, store.ErrInUse)
	if !strings.Contains(err.Error(), "1 machine") {
		t.Errorf("error %q does not give the count", err)
	}
	err = g.delete("default")
	wantErrIs(t, err, store.ErrInUse)
	wantErrIs(t, g.delete("nosuch"), store.ErrNotFound)

	if err := s.DeleteMachine(t.Context(), m.SystemID, nil); err != nil {
		t.Fatal(err)
	}
	if err := g.delete("rack-d"); err != nil {
		t.Fatalf("delete of an empty %s: %v", g.kind, err)
	}
	_, err = g.get("rack-d")
	wantErrIs(t, err, store.ErrNotFound)
}
