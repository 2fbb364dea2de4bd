package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

func enqueue(t *testing.T, s store.Store, id, bmc, action string) (store.PowerRequest, bool) {
	t.Helper()
	r, coalesced, err := s.EnqueuePower(context.Background(), store.PowerRequest{SystemID: id, BMCKey: bmc, Action: action, RequestedBy: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return r, coalesced
}

func claim(t *testing.T, s store.Store, owner string) (store.PowerRequest, bool) {
	t.Helper()
	now := time.Now()
	r, err := s.ClaimPower(context.Background(), owner, now, now.Add(time.Minute))
	if errors.Is(err, store.ErrNotFound) {
		return r, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, true
}

func finish(t *testing.T, s store.Store, r store.PowerRequest) {
	t.Helper()
	r.State, r.ResultState = store.PowerDone, "on"
	if err := s.FinishPower(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// testPowerQueue: coalescing, one command per machine and per BMC, and
// arrival order within a machine.
func testPowerQueue(t *testing.T, s store.Store) {
	a1, _ := enqueue(t, s, "m1", "ipmi://bmc1", "on")
	if again, c := enqueue(t, s, "m1", "ipmi://bmc1", "on"); !c || again.ID != a1.ID {
		t.Fatalf("equal request not coalesced: %v %v", again.ID, c)
	}
	a2, _ := enqueue(t, s, "m1", "ipmi://bmc1", "off")
	// on, off, on: the last "on" must not merge into the first, which
	// would turn the machine's final state off.
	a3, c := enqueue(t, s, "m1", "ipmi://bmc1", "on")
	if c {
		t.Fatalf("on after off coalesced with an earlier on: %+v", a3)
	}
	b1, _ := enqueue(t, s, "m2", "ipmi://bmc1", "on") // same BMC, other machine
	c1, _ := enqueue(t, s, "m3", "ipmi://bmc2", "on")
	m1, _ := enqueue(t, s, "m4", "", "on") // no shared BMC
	m2, _ := enqueue(t, s, "m5", "", "on")

	got := map[string]bool{}
	var running []store.PowerRequest
	for {
		r, ok := claim(t, s, "region-a")
		if !ok {
			break
		}
		got[r.ID] = true
		running = append(running, r)
	}
	// bmc1 runs one of m1's "on" (first in line), bmc2 runs m3, and the
	// two machines without a shared BMC both run.
	want := map[string]bool{a1.ID: true, c1.ID: true, m1.ID: true, m2.ID: true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first claims %v, want %v", got, want)
	}
	if again, c := enqueue(t, s, "m3", "ipmi://bmc2", "on"); !c || again.ID != c1.ID || again.State != store.PowerRunning {
		t.Fatalf("request equal to the running one not coalesced with it: %+v", again)
	}
	q, err := s.PowerQueue(context.Background(), "m1")
	if err != nil || len(q) != 3 || q[0].ID != a1.ID || q[1].ID != a2.ID || q[0].State != store.PowerRunning {
		t.Fatalf("queue of m1: %+v %v", q, err)
	}
	finish(t, s, running[0]) // a1
	// Next on bmc1: m1's "off" (a2) arrived before m2's "on" (b1).
	r, ok := claim(t, s, "region-a")
	if !ok || r.ID != a2.ID {
		t.Fatalf("after a1, claimed %+v, want m1's off", r)
	}
	if _, ok := claim(t, s, "region-a"); ok {
		t.Fatal("claimed a second command on bmc1 while one runs")
	}
	finish(t, s, r)
	r, ok = claim(t, s, "region-a")
	if !ok || r.ID != a3.ID {
		t.Fatalf("after a2, claimed %+v, want m1's second on", r)
	}
	finish(t, s, r)
	if r, ok := claim(t, s, "region-a"); !ok || r.ID != b1.ID {
		t.Fatalf("after a3, claimed %+v, want m2's on", r)
	}
	done, err := s.GetPowerRequest(context.Background(), a1.ID)
	if err != nil || done.State != store.PowerDone || done.ResultState != "on" || done.Finished.IsZero() {
		t.Fatalf("finished request reads %+v %v", done, err)
	}
	if err := s.FinishPower(context.Background(), store.PowerRequest{ID: b1.ID, State: store.PowerDone, LeaseOwner: "region-b"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finish by a region not holding the lease: %v", err)
	}
	if n, err := s.PrunePower(context.Background(), time.Now().Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("prune removed %d (%v), want the 3 finished", n, err)
	}
}

// testPowerLeases: a request whose region died is retried, then failed.
func testPowerLeases(t *testing.T, s store.Store) {
	ctx := context.Background()
	r, _ := enqueue(t, s, "m1", "ipmi://b", "on")
	now := time.Now()
	if _, err := s.ClaimPower(ctx, "dead", now, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	failed, err := s.ExpirePowerLeases(ctx, now.Add(2*time.Second), 2)
	if err != nil || len(failed) != 0 {
		t.Fatalf("first expiry failed %v %v; want it requeued", failed, err)
	}
	again, err := s.ClaimPower(ctx, "alive", now.Add(3*time.Second), now.Add(4*time.Second))
	if err != nil || again.ID != r.ID || again.Attempts != 2 {
		t.Fatalf("reclaim: %+v %v", again, err)
	}
	if err := s.ExtendPowerLease(ctx, r.ID, "dead", now.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the dead region extended a lease it lost: %v", err)
	}
	failed, err = s.ExpirePowerLeases(ctx, now.Add(5*time.Second), 2)
	if err != nil || len(failed) != 1 || failed[0].ID != r.ID || failed[0].State != store.PowerRunning || failed[0].LeaseOwner != "alive" {
		t.Fatalf("second expiry: %+v %v; want it handed back, still running, to be failed", failed, err)
	}
	if _, ok := claim(t, s, "alive"); ok {
		t.Fatal("an abandoned request was claimed again")
	}
	// Until someone fails it, every expiry names it again: a region that
	// dies before failing it leaves it to the next.
	if again, err := s.ExpirePowerLeases(ctx, now.Add(6*time.Second), 2); err != nil || len(again) != 1 {
		t.Fatalf("third expiry: %+v %v", again, err)
	}
	f := failed[0]
	f.State, f.Error = store.PowerFailed, "abandoned"
	if _, _, err := s.FinishPowerWith(ctx, f, nil); err != nil {
		t.Fatalf("fail the abandoned request: %v", err)
	}
	if again, err := s.ExpirePowerLeases(ctx, now.Add(7*time.Second), 2); err != nil || len(again) != 0 {
		t.Fatalf("expiry after it was failed: %+v %v", again, err)
	}
}

// testPowerClaimsConcurrent: many claimers never run two commands on one
// BMC at once, and every request runs exactly once.
func testPowerClaimsConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	const machines, bmcs = 40, 4
	for i := 0; i < machines; i++ {
		enqueue(t, s, fmt.Sprintf("m%d", i), fmt.Sprintf("bmc%d", i%bmcs), "on")
	}
	var (
		mu      sync.Mutex
		active  = map[string]int{}
		ran     = map[string]int{}
		overlap int
		wg      sync.WaitGroup
	)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			idle := 0
			for idle < 50 {
				now := time.Now()
				r, err := s.ClaimPower(ctx, fmt.Sprintf("w%d", w), now, now.Add(time.Minute))
				if errors.Is(err, store.ErrNotFound) {
					idle++
					time.Sleep(2 * time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				idle = 0
				mu.Lock()
				active[r.BMCKey]++
				if active[r.BMCKey] > 1 {
					overlap++
				}
				ran[r.ID]++
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				active[r.BMCKey]--
				mu.Unlock()
				r.State = store.PowerDone
				if err := s.FinishPower(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if overlap != 0 {
		t.Fatalf("%d overlapping commands on one BMC", overlap)
	}
	if len(ran) != machines {
		t.Fatalf("%d requests ran, want %d", len(ran), machines)
	}
	for id, n := range ran {
		if n != 1 {
			t.Fatalf("request %s ran %d times", id, n)
		}
	}
}

// testLeases: one holder at a time; renewal by the holder; takeover once
// expired.
func testLeases(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	got := func(holder string, at time.Time) bool {
		t.Helper()
		ok, err := s.AcquireLease(ctx, "monitor", holder, at, at.Add(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !got("a", now) {
		t.Fatal("a free lease was refused")
	}
	if got("b", now.Add(time.Second)) {
		t.Fatal("b took a lease a holds")
	}
	if !got("a", now.Add(5*time.Second)) {
		t.Fatal("a could not renew its lease")
	}
	if got("b", now.Add(14*time.Second)) {
		t.Fatal("b took the renewed lease before it expired")
	}
	if !got("b", now.Add(16*time.Second)) {
		t.Fatal("b could not take an expired lease")
	}
}
