package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func testUpdate(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.CreateTag(ctx, store.Tag{Name: "gpu"}); err != nil {
		t.Fatal(err)
	}
	m := newMachine("node1", mac(1))
	m.Tags = []string{"gpu"}
	create(t, s, m)

	got, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Hostname, m.Status, m.Owner = "renamed", machine.Commissioning, "alice"
		m.StatusExpires = ts(45)
		m.PowerParams["power_pass"] = "changed-" + Secret
		m.CPUCount, m.Memory, m.Storage, m.Netboot = 32, 1<<20, 1.5, false
		m.Locked, m.OwnerData = true, map[string]string{"juju-model-uuid": "m1", "ünï": "cödé"}
		m.Tags = nil // ignored: tags are TagMachines' business
		return []machine.Event{{Type: "Commissioning", Level: machine.LevelInfo, Description: "started"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Hostname != "renamed" || got.PowerParams["power_pass"] != "changed-"+Secret ||
		!got.Locked || got.OwnerData["ünï"] != "cödé" || len(got.OwnerData) != 2 {
		t.Fatalf("UpdateMachine returned %+v", got)
	}
	equalStrings(t, "tags", got.Tags, []string{"gpu"})
	sameMachine(t, get(t, s, m.SystemID), got)

	evs, _ := s.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{m.SystemID}})
	if len(evs) != 1 || evs[0].Hostname != "renamed" || evs[0].Type != "Commissioning" {
		t.Fatalf("events = %+v, want the update's event with the new hostname", evs)
	}

	// Clearing the expiry and the power parameters stores NULLs.
	got, err = s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.StatusExpires, m.PowerParams, m.Locked, m.OwnerData = time.Time{}, nil, false, nil
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := get(t, s, m.SystemID); !g.StatusExpires.IsZero() || g.PowerParams != nil || g.Version != 3 || g.Locked || g.OwnerData != nil {
		t.Fatalf("after clearing: %+v", g)
	}

	// The system ID cannot change.
	_, err = s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.SystemID = "zzzzzz"
		return nil, nil
	})
	if err == nil {
		t.Fatal("changing the system ID was accepted")
	}

	_, err = s.UpdateMachine(ctx, "nosuch", func(*machine.Machine) ([]machine.Event, error) {
		t.Fatal("fn called for a missing machine")
		return nil, nil
	})
	wantErrIs(t, err, store.ErrNotFound)
}

func testUpdateUpdatedTime(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("node1")
	m.Created, m.Updated = ts(0), ts(0)
	create(t, s, m)

	// fn moves Updated forward: its value is kept.
	got, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Updated = ts(10)
		return nil, nil
	})
	if err != nil || !got.Updated.Equal(ts(10)) {
		t.Fatalf("Updated = %v (%v), want fn's %v", got.Updated, err, ts(10))
	}
	// fn leaves it: the store sets now.
	before := time.Now().Add(-time.Second)
	got, err = s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) { return nil, nil })
	if err != nil || got.Updated.Before(before) || got.Updated.Location() != time.UTC {
		t.Fatalf("Updated = %v (%v), want now in UTC", got.Updated, err)
	}
	if !got.Created.Equal(ts(0)) {
		t.Fatalf("Created changed to %v", got.Created)
	}
}

// fnError is a caller's error type, which must come back unchanged.
type fnError struct{ reason string }

func (e *fnError) Error() string { return e.reason }

func testUpdateFnErrorRollsBack(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	nEvents := countEvents(t, s)

	want := &fnError{"not now"}
	_, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Hostname, m.CPUCount = "changed", 99
		m.Interfaces = append(m.Interfaces, machine.Interface{Name: "eth9", MAC: mac(9)})
		return []machine.Event{{Type: "should not be stored"}}, want
	})
	var fe *fnError
	if err != want || !errors.As(err, &fe) {
		t.Fatalf("error = %v, want fn's error unchanged", err)
	}
	sameMachine(t, get(t, s, m.SystemID), *m)
	if countEvents(t, s) != nEvents {
		t.Fatal("events of a failed update were stored")
	}
}

func testUpdateConflictRollsBack(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := create(t, s, newMachine("a", mac(1)))
	b := create(t, s, newMachine("b", mac(2)))
	nEvents := countEvents(t, s)

	_, err := s.UpdateMachine(ctx, b.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.CPUCount = 99
		m.Interfaces = append(m.Interfaces, machine.Interface{Name: "eth1", MAC: mac(1)})
		return []machine.Event{{Type: "Updated"}}, nil
	})
	wantConflict(t, err, "mac_address "+mac(1), a.SystemID)

	_, err = s.UpdateMachine(ctx, b.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Hostname, m.CPUCount = "a", 99
		return []machine.Event{{Type: "Updated"}}, nil
	})
	wantConflict(t, err, "hostname a", a.SystemID)
	if !strings.Contains(err.Error(), b.SystemID) {
		t.Errorf("error %q does not name the machine being updated", err)
	}

	sameMachine(t, get(t, s, b.SystemID), *b)
	sameMachine(t, get(t, s, a.SystemID), *a)
	if countEvents(t, s) != nEvents {
		t.Fatal("events of a failed update were stored")
	}
}

func testUpdateInterfaces(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1), mac(2), mac(3)))
	ids := []int64{m.Interfaces[0].ID, m.Interfaces[1].ID, m.Interfaces[2].ID}

	// Swap two MACs, drop the third, add a new one.
	got, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Interfaces[0].MAC, m.Interfaces[1].MAC = m.Interfaces[1].MAC, m.Interfaces[0].MAC
		m.Interfaces[1].Boot = true
		m.Interfaces = append(m.Interfaces[:2], machine.Interface{Name: "eth9", MAC: mac(9)})
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []machine.Interface{
		{ID: ids[0], Name: "eth0", MAC: mac(2), Boot: true},
		{ID: ids[1], Name: "eth1", MAC: mac(1), Boot: true},
	}
	if len(got.Interfaces) != 3 || got.Interfaces[0] != want[0] || got.Interfaces[1] != want[1] ||
		got.Interfaces[2].MAC != mac(9) || got.Interfaces[2].ID == 0 || got.Interfaces[2].ID == ids[2] {
		t.Fatalf("interfaces = %+v", got.Interfaces)
	}
	sameMachine(t, get(t, s, m.SystemID), got)
	// The dropped MAC is free again.
	create(t, s, newMachine("node2", mac(3)))
}

func testUpdateZoneAndPool(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.CreateZone(ctx, store.Zone{Name: "z1"}); err != nil {
		t.Fatal(err)
	}
	m := create(t, s, newMachine("node1"))
	got, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Zone = "z1"
		m.Pool = "" // empty means default
		return nil, nil
	})
	if err != nil || got.Zone != "z1" || got.Pool != "default" {
		t.Fatalf("zone, pool = %q, %q (%v)", got.Zone, got.Pool, err)
	}
	_, err = s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
		m.Pool = "nosuch"
		return nil, nil
	})
	wantErrIs(t, err, store.ErrNotFound)
	if g := get(t, s, m.SystemID); g.Zone != "z1" || g.Pool != "default" {
		t.Fatalf("a failed update moved the machine to %s/%s", g.Zone, g.Pool)
	}
}

// testUpdateConcurrent increments a field from many goroutines: the lock
// UpdateMachine takes must make every increment count.
func testUpdateConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("node1")
	m.CPUCount = 0
	create(t, s, m)
	const workers, rounds = 20, 3
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				_, err := s.UpdateMachine(ctx, m.SystemID, func(m *machine.Machine) ([]machine.Event, error) {
					m.CPUCount++
					return []machine.Event{{Type: "Counted"}}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := get(t, s, m.SystemID)
	if got.CPUCount != workers*rounds || got.Version != workers*rounds+1 {
		t.Fatalf("CPUCount, Version = %d, %d; want %d, %d (lost updates)", got.CPUCount, got.Version, workers*rounds, workers*rounds+1)
	}
	if n := countEvents(t, s); n != workers*rounds {
		t.Fatalf("%d events, want %d", n, workers*rounds)
	}
}
