package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testRackLeases: a rack's report replaces its own leases and no other
// rack's; leases that ran out are not listed, and are forgotten.
func testRackLeases(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Second)
	l := func(mac, ip string, in time.Duration) store.RackLease {
		return store.RackLease{MAC: mac, IP: ip, Subnet: "192.0.2.0/24", Expires: now.Add(in)}
	}
	list := func(at time.Time) string {
		t.Helper()
		ls, err := s.RackLeases(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, l := range ls {
			out += fmt.Sprintf("%s %s %s %s; ", l.RackID, l.MAC, l.IP, l.Expires.Sub(now))
		}
		return out
	}
	set := func(rack string, ls ...store.RackLease) {
		t.Helper()
		if err := s.SetRackLeases(ctx, rack, ls, now); err != nil {
			t.Fatal(err)
		}
	}
	set("aaaaaa", l("52:54:00:00:00:01", "192.0.2.100", time.Hour), l("52:54:00:00:00:02", "192.0.2.101", time.Minute))
	set("bbbbbb", l("52:54:00:00:00:03", "192.0.2.150", time.Hour), l("52:54:00:00:00:04", "192.0.2.151", -time.Minute))
	if got, want := list(now), "aaaaaa 52:54:00:00:00:01 192.0.2.100 1h0m0s; aaaaaa 52:54:00:00:00:02 192.0.2.101 1m0s; bbbbbb 52:54:00:00:00:03 192.0.2.150 1h0m0s; "; got != want {
		t.Fatalf("leases:\n got %s\nwant %s", got, want)
	}
	if got, want := list(now.Add(2*time.Minute)), "aaaaaa 52:54:00:00:00:01 192.0.2.100 1h0m0s; bbbbbb 52:54:00:00:00:03 192.0.2.150 1h0m0s; "; got != want {
		t.Fatalf("leases in two minutes:\n got %s\nwant %s", got, want)
	}
	// A's next report: one lease renewed, one gone, one new (an upper-case
	// MAC is stored lower-case). B's are untouched.
	set("aaaaaa", l("52:54:00:00:00:01", "192.0.2.100", 2*time.Hour), l("52:54:00:00:00:0A", "192.0.2.102", time.Hour))
	if got, want := list(now), "aaaaaa 52:54:00:00:00:01 192.0.2.100 2h0m0s; aaaaaa 52:54:00:00:00:0a 192.0.2.102 1h0m0s; bbbbbb 52:54:00:00:00:03 192.0.2.150 1h0m0s; "; got != want {
		t.Fatalf("after A's second report:\n got %s\nwant %s", got, want)
	}
	// B's expired lease was forgotten, not merely hidden.
	if got := list(now.Add(-time.Hour)); got != "aaaaaa 52:54:00:00:00:01 192.0.2.100 2h0m0s; aaaaaa 52:54:00:00:00:0a 192.0.2.102 1h0m0s; bbbbbb 52:54:00:00:00:03 192.0.2.150 1h0m0s; " {
		t.Fatalf("an expired lease is still stored: %s", got)
	}
	set("aaaaaa")
	if got := list(now); got != "bbbbbb 52:54:00:00:00:03 192.0.2.150 1h0m0s; " {
		t.Fatalf("after A reported none: %s", got)
	}
}
