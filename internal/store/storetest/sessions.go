package storetest

import (
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

func testSessions(t *testing.T, s store.Store) {
	ctx := t.Context()
	wantErrIs(t, s.SetPassword(ctx, "nobody", "x"), store.ErrNotFound)
	_, _, err := s.PasswordHash(ctx, "nobody")
	wantErrIs(t, err, store.ErrNotFound)

	if _, err := s.EnsureUser(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if u, h, err := s.PasswordHash(ctx, "alice"); err != nil || h != "" || u.Name != "alice" || !u.Admin {
		t.Fatalf("PasswordHash of a new user = %+v, %q, %v; want no hash", u, h, err)
	}
	if err := s.SetPassword(ctx, "alice", "hash-1"); err != nil {
		t.Fatal(err)
	}
	if _, h, _ := s.PasswordHash(ctx, "alice"); h != "hash-1" {
		t.Fatalf("hash = %q", h)
	}

	se, err := s.CreateSession(ctx, "alice", time.Hour)
	if err != nil || len(se.ID) != 32 || len(se.CSRF) != 32 || se.ID == se.CSRF {
		t.Fatalf("CreateSession = %+v, %v", se, err)
	}
	got, u, err := s.LookupSession(ctx, se.ID)
	if err != nil || u.Name != "alice" || got.CSRF != se.CSRF || got.Username != "alice" || !got.Expires.After(time.Now()) {
		t.Fatalf("LookupSession = %+v, %+v, %v", got, u, err)
	}
	_, _, err = s.LookupSession(ctx, se.ID+"x")
	wantErrIs(t, err, store.ErrNotFound)

	expired, err := s.CreateSession(ctx, "alice", -time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LookupSession(ctx, expired.ID)
	wantErrIs(t, err, store.ErrNotFound)

	if err := s.DeleteSession(ctx, se.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LookupSession(ctx, se.ID)
	wantErrIs(t, err, store.ErrNotFound)
	if err := s.DeleteSession(ctx, "never-issued"); err != nil {
		t.Fatalf("deleting an unknown session: %v", err)
	}

	// A new password logs every browser out.
	live, _ := s.CreateSession(ctx, "alice", time.Hour)
	if err := s.SetPassword(ctx, "alice", "hash-2"); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LookupSession(ctx, live.ID)
	wantErrIs(t, err, store.ErrNotFound)
	_, err = s.CreateSession(ctx, "nobody", time.Hour)
	wantErrIs(t, err, store.ErrNotFound)
}

func testConfig(t *testing.T, s store.Store) {
	ctx := t.Context()
	if v, ok, err := s.GetConfig(ctx, "power_poll_interval"); err != nil || ok || v != "" {
		t.Fatalf("unset setting = %q, %v, %v", v, ok, err)
	}
	for _, want := range []string{"300", "60"} {
		if err := s.SetConfig(ctx, "power_poll_interval", want); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := s.GetConfig(ctx, "power_poll_interval"); err != nil || !ok || v != want {
			t.Fatalf("setting = %q, %v, %v; want %q", v, ok, err, want)
		}
	}
	if err := s.SetConfig(ctx, "", "x"); err == nil {
		t.Fatal("an empty setting name was accepted")
	}
	if err := s.SetConfig(ctx, "maas_name", `"dc-7"`); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListConfig(ctx)
	if err != nil || len(all) != 2 || all["power_poll_interval"] != "60" || all["maas_name"] != `"dc-7"` {
		t.Fatalf("all settings: %v %v; want the two set, and nothing of the store's own", all, err)
	}
}

func testRegions(t *testing.T, s store.Store) {
	ctx := t.Context()
	before := time.Now().Add(-time.Minute)
	if rs, err := s.Regions(ctx, before); err != nil || len(rs) != 0 {
		t.Fatalf("regions of an empty store: %v, %v", rs, err)
	}
	for _, u := range []string{"http://a:5240/MAAS/", "http://b:5240/MAAS/", "http://a:5240/MAAS/"} {
		if err := s.TouchRegion(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.Regions(ctx, before)
	if err != nil || len(rs) != 2 {
		t.Fatalf("regions: %v, %v", rs, err)
	}
	if rs, _ := s.Regions(ctx, time.Now().Add(time.Minute)); len(rs) != 0 {
		t.Fatalf("regions seen in the future: %v", rs)
	}
}
