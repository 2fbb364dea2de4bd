package storetest

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func testCreateAndGet(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := newMachine("node1", mac(1), mac(2))
	m.StatusExpires = ts(30)
	m.Owner, m.OSystem, m.DistroSeries, m.EraseMode = "alice", "ubuntu", "noble", machine.EraseQuick
	m.EphemeralDeploy = true
	before := time.Now().UTC().Add(-time.Second)
	create(t, s, m, machine.Event{Type: "Created", Level: machine.LevelInfo, Description: "added", User: "alice"})

	if len(m.SystemID) != 6 || strings.Trim(m.SystemID, "abcdefghjkmnpqrstuvwxy3456789") != "" {
		t.Errorf("SystemID = %q, want 6 characters of the system ID alphabet", m.SystemID)
	}
	if m.Version != 1 {
		t.Errorf("Version = %d, want 1", m.Version)
	}
	if m.Created.Before(before) || m.Created.Location() != time.UTC || !m.Updated.Equal(m.Created) {
		t.Errorf("Created, Updated = %v, %v; want now, in UTC", m.Created, m.Updated)
	}
	if m.Zone != "default" || m.Pool != "default" {
		t.Errorf("zone, pool = %q, %q; want default, default", m.Zone, m.Pool)
	}
	if m.Interfaces[0].ID == 0 || m.Interfaces[1].ID <= m.Interfaces[0].ID {
		t.Errorf("interface IDs = %d, %d; want increasing, non-zero", m.Interfaces[0].ID, m.Interfaces[1].ID)
	}
	got := get(t, s, m.SystemID)
	sameMachine(t, got, *m)
	if got.StatusExpires.Location() != time.UTC || got.Created.Location() != time.UTC {
		t.Error("times are not returned in UTC")
	}

	evs, err := s.QueryEvents(ctx, store.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].SystemID != m.SystemID || evs[0].Hostname != "node1" || evs[0].User != "alice" || evs[0].ID == 0 {
		t.Fatalf("events = %+v, want the creation event with the machine's IDs", evs)
	}

	// A machine created with values keeps them.
	given := newMachine("node2", mac(3))
	given.SystemID, given.Created, given.Updated = "abc123", ts(1), ts(2)
	given.Zone, given.Pool = "default", "default"
	create(t, s, given)
	if given.SystemID != "abc123" || !given.Created.Equal(ts(1)) || !given.Updated.Equal(ts(2)) {
		t.Fatalf("given values not kept: %s %v %v", given.SystemID, given.Created, given.Updated)
	}
	sameMachine(t, get(t, s, "abc123"), *given)
}

func testCreateDefaults(t *testing.T, s store.Store) {
	// A bare machine: no interfaces, no power parameters, nothing optional.
	m := &machine.Machine{Hostname: "bare"}
	create(t, s, m)
	got := get(t, s, m.SystemID)
	if got.PowerParams != nil || len(got.Interfaces) != 0 || len(got.Tags) != 0 || !got.StatusExpires.IsZero() {
		t.Fatalf("bare machine read back as %+v", got)
	}
	sameMachine(t, got, *m)

	if err := s.CreateMachine(t.Context(), &machine.Machine{}, nil); err == nil {
		t.Fatal("a machine without a hostname was accepted")
	}
}

func testCreateUnknownZoneOrPool(t *testing.T, s store.Store) {
	for _, tc := range []struct{ zone, pool, msg string }{
		{"nowhere", "", `zone "nowhere" not found`},
		{"", "nopool", `pool "nopool" not found`},
	} {
		m := newMachine("node1", mac(1))
		m.Zone, m.Pool = tc.zone, tc.pool
		err := s.CreateMachine(t.Context(), m, []machine.Event{{Type: "Created"}})
		wantErrIs(t, err, store.ErrNotFound)
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("error %q does not say %q", err, tc.msg)
		}
	}
	if countMachines(t, s) != 0 || countEvents(t, s) != 0 {
		t.Fatal("a failed create left rows behind")
	}
}

func testCreateConflicts(t *testing.T, s store.Store) {
	first := create(t, s, newMachine("node1", mac(1), mac(2)), machine.Event{Type: "Created"})

	cases := []struct {
		name         string
		m            *machine.Machine
		what, holder string
	}{
		{"mac", newMachine("node2", mac(9), mac(2)), "mac_address " + mac(2), first.SystemID},
		{"hostname", newMachine("node1", mac(3)), "hostname node1", first.SystemID},
		{"system_id", func() *machine.Machine {
			m := newMachine("node3", mac(4))
			m.SystemID = first.SystemID
			return m
		}(), "system_id " + first.SystemID, first.SystemID},
		{"mac twice", newMachine("node4", mac(5), mac(5)), "mac_address " + mac(5) + " (listed twice)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.m.Clone()
			err := s.CreateMachine(t.Context(), tc.m, []machine.Event{{Type: "Created"}})
			wantConflict(t, err, tc.what, tc.holder)
			sameMachine(t, *tc.m, before) // *m untouched on failure
		})
	}
	if n := countMachines(t, s); n != 1 {
		t.Fatalf("%d machines after failed creates, want 1", n)
	}
	if n := countEvents(t, s); n != 1 {
		t.Fatalf("%d events after failed creates, want 1", n)
	}
	// The failed creates left no interfaces behind: their MACs are free.
	create(t, s, newMachine("node5", mac(9), mac(3), mac(4), mac(5)))
}

func testCreateWithTags(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, n := range []string{"virtual", "gpu"} {
		if _, err := s.CreateTag(ctx, store.Tag{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	m := newMachine("node1", mac(1))
	m.Tags = []string{"virtual", "gpu"}
	create(t, s, m)
	equalStrings(t, "tags", get(t, s, m.SystemID).Tags, []string{"gpu", "virtual"})

	bad := newMachine("node2", mac(2))
	bad.Tags = []string{"gpu", "missing"}
	err := s.CreateMachine(ctx, bad, nil)
	wantErrIs(t, err, store.ErrNotFound)
	if countMachines(t, s) != 1 {
		t.Fatal("a create with an unknown tag left a machine behind")
	}
}

func testGetNotFound(t *testing.T, s store.Store) {
	_, err := s.GetMachine(t.Context(), "nosuch")
	wantErrIs(t, err, store.ErrNotFound)
	if !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("error %q does not name the system ID", err)
	}
}

// testCreateConcurrentConflict races creates of one hostname: exactly one
// wins and every other gets a *store.ConflictError naming the winner, even
// where the clash is only caught by the unique index.
func testCreateConcurrentConflict(t *testing.T, s store.Store) {
	const n = 10
	var (
		wg      sync.WaitGroup
		won     atomic.Int32
		winner  atomic.Value
		holders = make([]string, n)
	)
	for i := range n {
		wg.Go(func() {
			m := newMachine("contested", mac(100+i))
			err := s.CreateMachine(t.Context(), m, nil)
			var ce *store.ConflictError
			switch {
			case err == nil:
				won.Add(1)
				winner.Store(m.SystemID)
			case errors.As(err, &ce):
				holders[i] = ce.Holder
			default:
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d creates of one hostname succeeded, want 1", won.Load())
	}
	for i, h := range holders {
		if h != "" && h != winner.Load() {
			t.Errorf("create %d: conflict names %q, want the winner %q", i, h, winner.Load())
		}
	}
	if countMachines(t, s) != 1 {
		t.Fatal("losing creates left machines behind")
	}
}
