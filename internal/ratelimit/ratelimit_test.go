package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

// TestPerKeyBounded: a flood of new keys never grows the table beyond its
// bound, and a key's bucket still limits it.
func TestPerKeyBounded(t *testing.T) {
	l := New(1, 2).WithMax(100)
	at := time.Unix(0, 0)
	l.now = func() time.Time { return at }
	for i := 0; i < 10000; i++ {
		l.Allow(fmt.Sprint("k", i))
		if len(l.buckets) > 100 {
			t.Fatalf("%d keys after %d new ones", len(l.buckets), i+1)
		}
	}
	got := []bool{l.Allow("a"), l.Allow("a"), l.Allow("a")}
	if fmt.Sprint(got) != "[true true false]" {
		t.Fatalf("one key's burst of 2: %v", got)
	}
}

// TestCoalescer: repeats within the window are folded and counted, the
// next window starts again, and the table stays bounded.
func TestCoalescer(t *testing.T) {
	c := NewCoalescer[string](time.Minute, 3)
	at := time.Unix(0, 0)
	c.now = func() time.Time { return at }
	steps := []struct {
		key   string
		after time.Duration
		first bool
	}{
		{"a", 0, true},
		{"a", time.Second, false},
		{"a", 30 * time.Second, false},
		{"b", 0, true},
		{"a", 31 * time.Second, true}, // a minute after the first: a new window
	}
	for i, s := range steps {
		at = at.Add(s.after)
		if got := c.First(s.key, s.key); got != s.first {
			t.Fatalf("step %d (%s): first %v, want %v", i, s.key, got, s.first)
		}
	}
	at = at.Add(2 * time.Minute)
	if d := c.Due(); len(d) != 0 {
		t.Fatalf("due %+v: the reopened window folded nothing", d)
	}
	c.First("x", "x")
	c.First("x", "x")
	c.First("x", "x")
	at = at.Add(time.Minute)
	if d := c.Due(); len(d) != 1 || d[0].Value != "x" || d[0].N != 2 {
		t.Fatalf("due %+v, want x twice more", d)
	}
	for i := 0; i < 100; i++ {
		c.First(fmt.Sprint("k", i), "")
		if len(c.keys) > 3 {
			t.Fatalf("%d keys", len(c.keys))
		}
	}
}

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
