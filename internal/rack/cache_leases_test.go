package rack

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestCacheKeepsPeerLeases: the other racks' leases reach the DHCP
// server as they come, and outlive a restart of the rack.
func TestCacheKeepsPeerLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "boot-cache.json")
	c := NewCache(path)
	var got []Lease
	c.OnPeerLeases(func(ls []Lease) { got = ls })
	ls := []Lease{{MAC: "52:54:00:00:00:01", IP: "192.0.2.150", Subnet: "192.0.2.0/24", Expires: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
	c.Apply(Change{Leases: &ls})
	if !reflect.DeepEqual(got, ls) {
		t.Fatalf("told %+v", got)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	again := NewCache(path)
	if err := again.Load(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.PeerLeases(), ls) {
		t.Fatalf("after a restart: %+v", again.PeerLeases())
	}
}
