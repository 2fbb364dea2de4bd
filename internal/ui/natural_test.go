package ui

import (
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"lab-2", "lab-10", -1},
		{"lab-10", "lab-2", 1},
		{"lab-2", "lab-2", 0},
		{"lab-02", "lab-2", -1}, // same value: byte order, so the order is total
		{"node-9", "node-010", -1},
		{"a", "a1", -1},
		{"a1b2", "a1b10", -1},
		{"rack1-node20", "rack2-node3", -1},
		{"web", "web-1", -1},
		{"db-9", "web-1", -1},
		{"x99999999999999999999998", "x99999999999999999999999", -1}, // beyond int64
		{"", "a", -1},
		{"1", "a", -1},
	} {
		if got := naturalCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
		if got := naturalCompare(tc.b, tc.a); got != -tc.want {
			t.Errorf("naturalCompare(%q, %q) = %d; want %d", tc.b, tc.a, got, -tc.want)
		}
	}
	names := []string{"lab-10", "lab-1", "lab-2", "lab-100", "lab-20", "gpu-3"}
	slices.SortFunc(names, naturalCompare)
	if want := []string{"gpu-3", "lab-1", "lab-2", "lab-10", "lab-20", "lab-100"}; !slices.Equal(names, want) {
		t.Fatalf("sorted %v; want %v", names, want)
	}
}
