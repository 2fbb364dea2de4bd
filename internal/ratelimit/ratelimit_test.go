package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

// A bounded table full of keys still in use refuses new keys, and takes
// them again once old ones have refilled; keys it holds keep their
// buckets.
func TestBoundedTable(t *testing.T) {
	now := time.Unix(0, 0)
	l := NewBounded(1, 2, 3)
	l.now = func() time.Time { return now }
	for i := range 3 {
		if !l.Allow(fmt.Sprint(i)) {
			t.Fatalf("key %d refused under the bound", i)
		}
	}
	if l.Allow("new") {
		t.Fatal("a new key taken into a full table")
	}
	if !l.Allow("0") {
		t.Fatal("a key in the table refused with tokens left")
	}
	if len(l.buckets) != 3 {
		t.Fatalf("%d keys kept; the bound is 3", len(l.buckets))
	}
	now = now.Add(3 * time.Second) // every bucket refills
	if !l.Allow("new") {
		t.Fatal("a new key refused once the table's keys had refilled")
	}
}
