package storetest

import (
	"testing"

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
