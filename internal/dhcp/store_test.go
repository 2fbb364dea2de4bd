package dhcp

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// t0 is near the real now: FileStore prunes leases long expired by the wall clock.
var t0 = time.Now().UTC().Truncate(time.Second)

func lease(n int, ip string, st LeaseState, exp time.Duration) Lease {
	return Lease{MAC: macN(n), IP: netip.MustParseAddr(ip), Subnet: netip.MustParsePrefix("192.0.2.0/24"),
		State: st, Expires: t0.Add(exp), Updated: t0}
}

// testStoreContract is what every LeaseStore must do; the lead's
// database-backed store can run it too.
func testStoreContract(t *testing.T, s LeaseStore) {
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Put(ctx, lease(1, "192.0.2.10", StateBound, time.Hour)))
	if err := s.Put(ctx, lease(2, "192.0.2.10", StateOffered, time.Minute)); !errors.Is(err, ErrAddressInUse) {
		t.Fatalf("second MAC on an active address: %v", err)
	}
	// Same MAC moves: its old address is freed.
	must(s.Put(ctx, lease(1, "192.0.2.11", StateBound, time.Hour)))
	if _, ok, _ := s.FindByIP(ctx, netip.MustParseAddr("192.0.2.10")); ok {
		t.Error("old address still indexed after the MAC moved")
	}
	// An expired lease yields its address to another MAC, which evicts it.
	must(s.Put(ctx, lease(3, "192.0.2.12", StateBound, -time.Second)))
	must(s.Put(ctx, lease(4, "192.0.2.12", StateOffered, time.Minute)))
	if _, ok, _ := s.Get(ctx, macN(3)); ok {
		t.Error("evicted lease still stored")
	}
	if l, ok, _ := s.FindByIP(ctx, netip.MustParseAddr("192.0.2.12")); !ok || !bytes.Equal(l.MAC, macN(4)) {
		t.Errorf("FindByIP after takeover: %+v", l)
	}
	// Released leases are inactive even before Expires.
	rel := lease(5, "192.0.2.13", StateReleased, time.Hour)
	must(s.Put(ctx, rel))
	must(s.Put(ctx, lease(6, "192.0.2.13", StateBound, time.Hour)))
	must(s.Delete(ctx, macN(6)))
	must(s.Delete(ctx, macN(6))) // idempotent
	ls, err := s.List(ctx)
	must(err)
	var got []string
	for _, l := range ls {
		got = append(got, l.MAC.String()+"="+l.IP.String())
	}
	if want := macN(1).String() + "=192.0.2.11 " + macN(4).String() + "=192.0.2.12"; strings.Join(got, " ") != want {
		t.Errorf("List = %v, want %s", got, want)
	}
}

func TestMemStoreContract(t *testing.T) { testStoreContract(t, NewMemStore()) }

func TestFileStoreContract(t *testing.T) {
	s, err := OpenFileStore(filepath.Join(t.TempDir(), "leases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testStoreContract(t, s)
}

func TestFileStoreSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.jsonl")
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.Put(ctx, lease(1, "192.0.2.10", StateBound, time.Hour))
	s.Put(ctx, lease(2, "192.0.2.11", StateOffered, time.Minute)) // memory only
	s.Put(ctx, lease(3, "192.0.2.12", StateBound, time.Hour))
	s.Delete(ctx, macN(3))
	s.Close()
	// A crash mid-append leaves a torn last line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"op":"put","mac":"52:54:01:00:00:09","ip":"192.0`)
	f.Close()

	s, err = OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls, _ := s.List(ctx)
	if len(ls) != 1 || !bytes.Equal(ls[0].MAC, macN(1)) || ls[0].State != StateBound || !ls[0].Expires.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after reload: %+v", ls)
	}
	// The torn line is gone, so new appends start on a line of their own.
	s.Put(ctx, lease(4, "192.0.2.14", StateBound, time.Hour))
	s.Close()
	s2, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if ls, _ := s2.List(ctx); len(ls) != 2 {
		t.Errorf("after second reload: %+v", ls)
	}
}

func TestFileStoreCompacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.jsonl")
	s, err := OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	// One client renewing many times: the log must not keep every renewal.
	for i := range 3 * compactSlack {
		l := lease(1, "192.0.2.10", StateBound, time.Duration(i)*time.Second+time.Hour)
		if err := s.Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n > compactSlack+3 {
		t.Errorf("log has %d lines for one lease", n)
	}
	if l, ok, _ := s.Get(ctx, macN(1)); !ok || !l.Expires.Equal(t0.Add(time.Hour+time.Duration(3*compactSlack-1)*time.Second)) {
		t.Errorf("latest renewal lost: %+v", l)
	}
}
