package storetest

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// testUpdateMachinePower: a status change and the power request it implies
// commit together, coalescing as EnqueuePower does; a request that cannot
// be stored takes the status change and its events down with it.
func testUpdateMachinePower(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	release := func(st machine.Status, r store.PowerRequest) (machine.Machine, *store.PowerRequest, bool, error) {
		return s.UpdateMachinePower(ctx, m.SystemID, nil, func(m *machine.Machine) ([]machine.Event, *store.PowerRequest, error) {
			m.Status = st
			return []machine.Event{{Type: "Releasing"}}, &r, nil
		})
	}

	got, r1, c, err := release(machine.Releasing, store.PowerRequest{BMCKey: "ipmi://bmc1", Action: "off", RequestedBy: "t"})
	if err != nil || c || r1 == nil || r1.SystemID != m.SystemID || r1.State != store.PowerQueued || got.Status != machine.Releasing {
		t.Fatalf("first change: %+v %+v coalesced=%v err=%v", got.Status, r1, c, err)
	}
	if _, r2, c, err := release(machine.Releasing, store.PowerRequest{BMCKey: "ipmi://bmc1", Action: "off"}); err != nil || !c || r2.ID != r1.ID {
		t.Fatalf("equal request not coalesced with the newest: %+v %v %v", r2, c, err)
	}

	// An insert that fails (the id is taken) must leave no trace.
	nEvents := countEvents(t, s)
	_, _, _, err = release(machine.Deploying, store.PowerRequest{ID: r1.ID, BMCKey: "ipmi://bmc1", Action: "on"})
	if err == nil {
		t.Fatal("a request whose insert fails was reported stored")
	}
	if st := get(t, s, m.SystemID).Status; st != machine.Releasing {
		t.Fatalf("status %s after a failed power insert, want %s unchanged", st, machine.Releasing)
	}
	if countEvents(t, s) != nEvents {
		t.Fatal("events of a change whose power request failed were stored")
	}
	q, err := s.PowerQueue(ctx, m.SystemID)
	if err != nil || len(q) != 1 || q[0].ID != r1.ID {
		t.Fatalf("queue after the failed change: %+v %v", q, err)
	}

	// No request: a plain update, and files are stored with it.
	got, r3, _, err := s.UpdateMachinePower(ctx, m.SystemID, map[string][]byte{"out": []byte("x")}, func(m *machine.Machine) ([]machine.Event, *store.PowerRequest, error) {
		m.Status = machine.Ready
		return nil, nil, nil
	})
	if err != nil || r3 != nil || got.Status != machine.Ready {
		t.Fatalf("change without power: %v %+v %v", got.Status, r3, err)
	}
	if res, err := s.ListResults(ctx, m.SystemID); err != nil || len(res) != 1 {
		t.Fatalf("results: %+v %v", res, err)
	}
}
