package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testPowerClaimWhere: a rack's claim takes the oldest runnable request
// its filter accepts, keeps the queue's order and rules among those, and
// a claim never marked sent can be given back with its attempt uncounted.
func testPowerClaimWhere(t *testing.T, s store.Store) {
	ctx := context.Background()
	far, _ := enqueue(t, s, "m1", "ipmi://198.51.100.1:623", "on")
	near, _ := enqueue(t, s, "m2", "ipmi://192.0.2.1:623", "on")
	nearQuery, _ := enqueue(t, s, "m3", "ipmi://192.0.2.2:623", "query")
	ours := func(r store.PowerRequest) bool { return strings.Contains(r.BMCKey, "192.0.2.") }
	claimOurs := func(owner string) (store.PowerRequest, error) {
		now := time.Now()
		return s.ClaimPowerWhere(ctx, owner, now, now.Add(time.Minute), ours)
	}
	r, err := claimOurs("rack:a")
	if err != nil || r.ID != near.ID || r.LeaseOwner != "rack:a" || r.Attempts != 1 {
		t.Fatalf("first claim: %+v %v (want %s)", r, err, near.ID)
	}
	// Actions go before queries, but only among the rack's.
	q, err := claimOurs("rack:a")
	if err != nil || q.ID != nearQuery.ID {
		t.Fatalf("second claim: %+v %v", q, err)
	}
	if _, err := claimOurs("rack:a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claimed past the rack's requests: %v", err)
	}
	if r, ok := claim(t, s, "region"); !ok || r.ID != far.ID {
		t.Fatalf("unfiltered claim: %+v %v", r, ok)
	}

	if err := s.ReleasePower(ctx, near.ID, "rack:b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another owner released the request: %v", err)
	}
	if err := s.ReleasePower(ctx, near.ID, "rack:a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetPowerRequest(ctx, near.ID); got.State != store.PowerQueued || got.Attempts != 0 || got.LeaseOwner != "" {
		t.Fatalf("released: %+v", got)
	}
	if err := s.MarkPowerSent(ctx, nearQuery.ID, "rack:a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleasePower(ctx, nearQuery.ID, "rack:a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a request marked sent was released: %v", err)
	}
	if r, err := claimOurs("rack:b"); err != nil || r.ID != near.ID || r.Attempts != 1 {
		t.Fatalf("claim after release: %+v %v", r, err)
	}
}

// testRackPower: racks asking for power work are listed while seen.
func testRackPower(t *testing.T, s store.Store) {
	ctx := context.Background()
	now := time.Now()
	for _, r := range []store.RackPower{
		{ID: "a", Hostname: "rack-a", Networks: []string{"192.0.2.0/25", "198.18.0.0/24"}, Seen: now.Add(-time.Minute)},
		{ID: "b", Hostname: "rack-b", Networks: []string{"192.0.2.128/25"}, Seen: now.Add(-5 * time.Second)},
		{ID: "c", Hostname: "rack-c", Seen: now.Add(-time.Second)},
	} {
		if err := s.NoteRackPower(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.NoteRackPower(ctx, store.RackPower{ID: "b", Hostname: "rack-b2", Networks: []string{"192.0.2.128/26"}, Seen: now}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RackPowers(ctx, now.Add(-30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
		if r.ID == "b" && (r.Hostname != "rack-b2" || !reflect.DeepEqual(r.Networks, []string{"192.0.2.128/26"})) {
			t.Errorf("rack b not replaced: %+v", r)
		}
		if r.ID == "c" && len(r.Networks) != 0 {
			t.Errorf("rack c networks: %v", r.Networks)
		}
	}
	if !reflect.DeepEqual(ids, []string{"b", "c"}) {
		t.Fatalf("live racks: %v", ids)
	}
	all, _ := s.RackPowers(ctx, now.Add(-time.Hour))
	if len(all) != 3 || !reflect.DeepEqual(all[0].Networks, []string{"192.0.2.0/25", "198.18.0.0/24"}) {
		t.Fatalf("all racks: %+v", all)
	}
}
