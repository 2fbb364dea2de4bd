package storetest

import (
	"errors"
	"testing"
	"time"

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

// testFinishPowerWith: a command's end, the machine's step it implies and
// the request that step asks for commit together; a lost lease takes the
// step down with it; a deleted machine still lets the request end; a
// request is marked sent only by the worker holding it.
func testFinishPowerWith(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1", mac(1)))
	m.Status = machine.Releasing
	if _, err := s.UpdateMachine(ctx, m.SystemID, func(x *machine.Machine) ([]machine.Event, error) {
		x.Status = machine.Releasing
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	enqueue(t, s, m.SystemID, "ipmi://bmc1", "off")
	r, _ := claim(t, s, "region-a")
	if err := s.MarkPowerSent(ctx, r.ID, "region-b", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("marked sent by a region without the lease: %v", err)
	}
	sent := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.MarkPowerSent(ctx, r.ID, "region-a", sent); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPowerRequest(ctx, r.ID); err != nil || !got.Sent.Equal(sent) {
		t.Fatalf("sent reads %v (%v), want %v", got.Sent, err, sent)
	}
	step := func(st machine.Status, next *store.PowerRequest) store.PowerUpdateFunc {
		return func(x *machine.Machine) ([]machine.Event, *store.PowerRequest, error) {
			x.Status = st
			return []machine.Event{{Type: "Power off"}}, next, nil
		}
	}
	nEvents := countEvents(t, s)

	// The lease is another's: nothing of the step is stored.
	lost := r
	lost.State, lost.LeaseOwner = store.PowerDone, "region-b"
	if _, _, err := s.FinishPowerWith(ctx, lost, step(machine.Ready, nil)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finish without the lease: %v", err)
	}
	if st := get(t, s, m.SystemID).Status; st != machine.Releasing || countEvents(t, s) != nEvents {
		t.Fatalf("a finish without the lease changed the machine: %s", st)
	}

	r.State, r.ResultState = store.PowerDone, "off"
	got, next, err := s.FinishPowerWith(ctx, r, step(machine.Ready, &store.PowerRequest{BMCKey: "ipmi://bmc1", Action: "query"}))
	if err != nil || got.Status != machine.Ready || next == nil || next.State != store.PowerQueued || next.SystemID != m.SystemID {
		t.Fatalf("finish: %v %+v %v", got.Status, next, err)
	}
	if done, _ := s.GetPowerRequest(ctx, r.ID); done.State != store.PowerDone || countEvents(t, s) != nEvents+1 {
		t.Fatalf("request reads %s after the finish", done.State)
	}

	// A machine deleted while its command ran: the request still ends.
	r2, _ := claim(t, s, "region-a")
	if err := s.DeleteMachine(ctx, m.SystemID, nil); err != nil {
		t.Fatal(err)
	}
	r2.State = store.PowerDone
	if gone, next, err := s.FinishPowerWith(ctx, r2, step(machine.Ready, nil)); err != nil || gone.SystemID != "" || next != nil {
		t.Fatalf("finish for a deleted machine: %+v %+v %v", gone, next, err)
	}
	if done, _ := s.GetPowerRequest(ctx, r2.ID); done.State != store.PowerDone {
		t.Fatalf("request of a deleted machine reads %s", done.State)
	}
}
