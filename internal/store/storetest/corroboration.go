package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

func testSightings(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i, want := range []bool{true, false, false} {
		fresh, err := s.SpendSighting(ctx, "sig-1", "abc")
		if err != nil || fresh != want {
			t.Fatalf("spend %d: %v %v, want %v", i, fresh, err, want)
		}
	}
	if fresh, err := s.SpendSighting(ctx, "sig-2", "abc"); err != nil || !fresh {
		t.Fatalf("another sighting: %v %v", fresh, err)
	}
	// Pruning keeps what was spent within the day.
	if _, err := s.Prune(ctx, store.Retention{Batch: 100}); err != nil {
		t.Fatal(err)
	}
	if fresh, _ := s.SpendSighting(ctx, "sig-1", "abc"); fresh {
		t.Fatal("a sighting spent a moment ago was pruned")
	}
}

func testHeldBoots(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := create(t, s, newMachine("node1"))
	if _, err := s.HeldBoot(ctx, m.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("nothing held: %v", err)
	}
	first := store.HeldBoot{SystemID: m.SystemID, MACs: []string{mac(1)}, Source: "192.0.2.9", Reason: "first"}
	second := store.HeldBoot{SystemID: m.SystemID, MACs: []string{mac(2), mac(3)}, BootMAC: mac(2), UUID: "u", Source: "192.0.2.10", Reason: "second"}
	for _, h := range []store.HeldBoot{first, second} {
		if err := s.HoldBoot(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.HeldBoot(ctx, m.SystemID)
	if err != nil || !slices.Equal(got.MACs, second.MACs) || got.BootMAC != mac(2) || got.UUID != "u" || got.Source != "192.0.2.10" || got.Reason != "second" || got.Created.IsZero() {
		t.Fatalf("held: %+v %v", got, err)
	}
	if err := s.HoldBoot(ctx, store.HeldBoot{SystemID: "nosuch", MACs: []string{mac(1)}}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("hold for no machine: %v", err)
	}
	other := create(t, s, newMachine("node2", mac(9)))
	if err := s.HoldBoot(ctx, store.HeldBoot{SystemID: other.SystemID, MACs: []string{mac(8)}}); err != nil {
		t.Fatal(err)
	}
	// Both holds may fall in one tick of the store's clock: compare sets.
	ids, err := s.HeldBootMachines(ctx)
	if want := []string{m.SystemID, other.SystemID}; err != nil || !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("HeldBootMachines = %v, %v; want %v", ids, err, want)
	}
	if err := s.DeleteHeldBoot(ctx, other.SystemID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHeldBoot(ctx, m.SystemID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HeldBoot(ctx, m.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	// Deleting the machine drops its held boot.
	if err := s.HoldBoot(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMachine(ctx, m.SystemID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HeldBoot(ctx, m.SystemID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after the machine was deleted: %v", err)
	}
	if ids, err := s.HeldBootMachines(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("HeldBootMachines after all went = %v, %v", ids, err)
	}
}
