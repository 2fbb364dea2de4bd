package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testNamedTokens: a user's API keys are listed with their names, renamed
// and deleted by token key, only by their owner, and a deleted one is no
// longer found.
func testNamedTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.EnsureUser(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureUser(ctx, "bob", false); err != nil {
		t.Fatal(err)
	}
	plain, err := s.CreateToken(ctx, "alice")
	if err != nil || plain.Name != store.DefaultTokenName {
		t.Fatalf("CreateToken = %+v, %v; want the name %q", plain, err, store.DefaultTokenName)
	}
	ci, err := s.CreateNamedToken(ctx, "alice", "ci runner")
	if err != nil {
		t.Fatal(err)
	}
	bobs, _ := s.CreateToken(ctx, "bob")
	_, err = s.CreateNamedToken(ctx, "nobody", "x")
	wantErrIs(t, err, store.ErrNotFound)

	ts, err := s.ListTokens(ctx, "alice")
	if err != nil || len(ts) != 2 || ts[0] != plain || ts[1] != ci {
		t.Fatalf("ListTokens = %+v, %v; want %+v then %+v", ts, err, plain, ci)
	}
	if err := s.RenameToken(ctx, "alice", ci.TokenKey, "deploy bot"); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.LookupToken(ctx, ci.ConsumerKey, ci.TokenKey); err != nil || got.Name != "deploy bot" {
		t.Fatalf("renamed token = %+v, %v", got, err)
	}
	// Another user's key is not found for alice, and stays.
	wantErrIs(t, s.RenameToken(ctx, "alice", bobs.TokenKey, "mine"), store.ErrNotFound)
	wantErrIs(t, s.DeleteToken(ctx, "alice", bobs.TokenKey), store.ErrNotFound)
	if got, _, err := s.LookupToken(ctx, bobs.ConsumerKey, bobs.TokenKey); err != nil || got.Name != store.DefaultTokenName {
		t.Fatalf("bob's token after alice's attempts = %+v, %v", got, err)
	}

	if err := s.DeleteToken(ctx, "alice", ci.TokenKey); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.LookupToken(ctx, ci.ConsumerKey, ci.TokenKey)
	wantErrIs(t, err, store.ErrNotFound)
	wantErrIs(t, s.DeleteToken(ctx, "alice", ci.TokenKey), store.ErrNotFound)
	if ts, _ := s.ListTokens(ctx, "alice"); len(ts) != 1 || ts[0] != plain {
		t.Fatalf("after delete: %+v", ts)
	}
}

// testRacks: a rack is recorded once by its system ID, with what it said
// last, and regions are listed with when they were seen.
func testRacks(t *testing.T, s store.Store) {
	ctx := t.Context()
	if rs, err := s.ListRacks(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("ListRacks on an empty store = %v, %v", rs, err)
	}
	before := time.Now().Add(-time.Second)
	for _, r := range []store.Rack{
		{SystemID: "r2", Hostname: "rack-b", Address: "192.0.2.2", Version: "1.0"},
		{SystemID: "r1", Hostname: "rack-a", Address: "192.0.2.1", Version: "1.0"},
		{SystemID: "r1", Hostname: "rack-a", Address: "192.0.2.9", Version: "1.1", DNS: []string{"192.0.2.9", "2001:db8::9"}},
	} {
		if err := s.TouchRack(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.ListRacks(ctx)
	if err != nil || len(rs) != 2 || rs[0].SystemID != "r1" || rs[0].Address != "192.0.2.9" || rs[0].Version != "1.1" ||
		!slices.Equal(rs[0].DNS, []string{"192.0.2.9", "2001:db8::9"}) || rs[1].DNS != nil || rs[1].Hostname != "rack-b" || rs[0].Seen.Before(before) {
		t.Fatalf("ListRacks = %+v, %v", rs, err)
	}
	if err := s.TouchRegion(ctx, "http://region-a:5240/MAAS/"); err != nil {
		t.Fatal(err)
	}
	gs, err := s.RegionsSeen(ctx)
	if err != nil || len(gs) != 1 || gs[0].URL != "http://region-a:5240/MAAS/" || gs[0].Seen.Before(before) {
		t.Fatalf("RegionsSeen = %+v, %v", gs, err)
	}
}

// testImportSSHKeys: imported keys carry their source, a key the user has
// already is not added twice, and importing again adds nothing.
func testImportSSHKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.EnsureUser(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	own, err := s.AddSSHKey(ctx, "alice", "ssh-ed25519 AAAA own")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := s.ImportSSHKeys(ctx, "alice", "gh:alice", []string{"ssh-ed25519 AAAA own", "ssh-ed25519 BBBB gh1", "ssh-ed25519 CCCC gh2"})
	if err != nil || len(ks) != 2 || ks[0].Key != "ssh-ed25519 BBBB gh1" || ks[0].KeySource != "gh:alice" || ks[1].Key != "ssh-ed25519 CCCC gh2" {
		t.Fatalf("ImportSSHKeys = %+v, %v", ks, err)
	}
	again, err := s.ImportSSHKeys(ctx, "alice", "gh:alice", []string{"ssh-ed25519 BBBB gh1"})
	if err != nil || len(again) != 2 || again[0].ID != ks[0].ID {
		t.Fatalf("second import = %+v, %v", again, err)
	}
	all, _ := s.ListSSHKeys(ctx, "alice")
	if len(all) != 3 || all[0].ID != own.ID || all[0].KeySource != "" || all[2].KeySource != "gh:alice" {
		t.Fatalf("keys after imports: %+v", all)
	}
	_, err = s.ImportSSHKeys(ctx, "nobody", "gh:x", []string{"ssh-ed25519 DDDD x"})
	wantErrIs(t, err, store.ErrNotFound)
}
