package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

func testDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.CreateTag(ctx, store.Tag{Name: "gpu"}); err != nil {
		t.Fatal(err)
	}
	m := newMachine("node1", mac(1), mac(2))
	m.Tags = []string{"gpu"}
	create(t, s, m, machine.Event{Type: "Created"})
	keep := create(t, s, newMachine("node2", mac(3)))

	if err := s.DeleteMachine(ctx, m.SystemID, []machine.Event{{Type: "Deleted", User: "admin"}}); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetMachine(ctx, m.SystemID)
	wantErrIs(t, err, store.ErrNotFound)
	if countMachines(t, s) != 1 {
		t.Fatal("the other machine went too")
	}
	// The interfaces went with it: the MACs and hostname are free again.
	create(t, s, newMachine("node1", mac(1), mac(2)))
	// The tag link went too, and the tag stays.
	if ms := list(t, s, store.MachineFilter{Tags: []string{"gpu"}}); len(ms) != 0 {
		t.Fatalf("tag still links %v", hostnames(ms))
	}
	// The events outlive the machine, the new one filled with its names.
	evs, err := s.QueryEvents(ctx, store.EventFilter{SystemIDs: []string{m.SystemID}, Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Type != "Deleted" || evs[1].Hostname != "node1" || evs[1].User != "admin" {
		t.Fatalf("events = %+v", evs)
	}

	err = s.DeleteMachine(ctx, m.SystemID, []machine.Event{{Type: "Deleted"}})
	wantErrIs(t, err, store.ErrNotFound)
	sameMachine(t, get(t, s, keep.SystemID), *keep)
}

func testExpiredAndCount(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i, exp := range []time.Time{ts(10), ts(20), {}, ts(5)} {
		m := newMachine(string(rune('a'+i)) + "-node")
		m.StatusExpires = exp
		create(t, s, m)
	}
	ms := list(t, s, store.MachineFilter{})
	byHost := map[string]string{}
	for _, m := range ms {
		byHost[m.Hostname] = m.SystemID
	}
	for _, tc := range []struct {
		now  time.Time
		want []string
	}{
		{ts(4), nil},
		{ts(5), []string{byHost["d-node"]}}, // at the deadline counts
		{ts(10).Add(time.Microsecond), []string{byHost["d-node"], byHost["a-node"]}},
		{ts(59), []string{byHost["d-node"], byHost["a-node"], byHost["b-node"]}},
	} {
		got, err := s.ExpiredMachines(ctx, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		equalStrings(t, "expired at "+tc.now.String(), got, tc.want)
	}
	// A time in another zone is the same instant.
	got, err := s.ExpiredMachines(ctx, ts(5).In(time.FixedZone("X", 3600)))
	if err != nil || len(got) != 1 {
		t.Fatalf("expired in another zone = %v, %v", got, err)
	}
	if n := countMachines(t, s); n != 4 {
		t.Fatalf("CountMachines = %d, want 4", n)
	}
}

func testUsers(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.GetUser(ctx, "alice")
	wantErrIs(t, err, store.ErrNotFound)

	alice, err := s.EnsureUser(ctx, "alice", false)
	if err != nil || alice.ID == 0 || alice.Name != "alice" || alice.Admin {
		t.Fatalf("EnsureUser = %+v, %v", alice, err)
	}
	// Asking again, even for admin, returns the user unchanged.
	again, err := s.EnsureUser(ctx, "alice", true)
	if err != nil || again != alice {
		t.Fatalf("EnsureUser again = %+v, %v; want %+v", again, err, alice)
	}
	root, err := s.EnsureUser(ctx, "root", true)
	if err != nil || !root.Admin {
		t.Fatalf("EnsureUser(root, admin) = %+v, %v", root, err)
	}
	if got, err := s.GetUser(ctx, "root"); err != nil || got != root {
		t.Fatalf("GetUser = %+v, %v", got, err)
	}
	users, err := s.ListUsers(ctx)
	if err != nil || len(users) != 2 || users[0] != alice || users[1] != root {
		t.Fatalf("ListUsers = %+v, %v", users, err)
	}
	if _, err := s.EnsureUser(ctx, "", false); err == nil {
		t.Fatal("an empty user name was accepted")
	}

	carol, err := s.CreateUser(ctx, store.User{Name: "carol", Email: "carol@example.com", Admin: true}, "hash-1")
	if err != nil || carol.ID == 0 || carol.Email != "carol@example.com" || !carol.Admin {
		t.Fatalf("CreateUser = %+v, %v", carol, err)
	}
	if _, h, err := s.PasswordHash(ctx, "carol"); err != nil || h != "hash-1" {
		t.Fatalf("carol's hash = %q, %v", h, err)
	}
	// A taken name is a conflict, and the holder is left as it was.
	_, err = s.CreateUser(ctx, store.User{Name: "carol", Email: "other@example.com"}, "hash-2")
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("CreateUser of a taken name: %v, want a conflict", err)
	}
	if got, h, _ := s.PasswordHash(ctx, "carol"); got != carol || h != "hash-1" {
		t.Fatalf("carol after a refused create: %+v %q", got, h)
	}
	if _, err := s.CreateUser(ctx, store.User{}, ""); err == nil {
		t.Fatal("CreateUser without a name was accepted")
	}
}

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.CreateToken(ctx, "nobody")
	wantErrIs(t, err, store.ErrNotFound)

	alice, _ := s.EnsureUser(ctx, "alice", false)
	before := time.Now().Add(-time.Second)
	tok, err := s.CreateToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		v string
		n int
	}{{tok.ConsumerKey, 18}, {tok.TokenKey, 18}, {tok.Secret, 32}} {
		if len(part.v) != part.n || strings.Trim(part.v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			t.Fatalf("token part %q: want %d alphanumerics", part.v, part.n)
		}
	}
	if tok.Username != "alice" || tok.Created.Before(before) {
		t.Fatalf("token = %+v", tok)
	}
	other, _ := s.CreateToken(ctx, "alice")
	if other.TokenKey == tok.TokenKey || other.Secret == tok.Secret {
		t.Fatal("two tokens share keys")
	}

	got, u, err := s.LookupToken(ctx, tok.ConsumerKey, tok.TokenKey)
	if err != nil || got != tok || u != alice {
		t.Fatalf("LookupToken = %+v, %+v, %v; want %+v, %+v", got, u, err, tok, alice)
	}
	_, _, err = s.LookupToken(ctx, tok.ConsumerKey, "wrong")
	wantErrIs(t, err, store.ErrNotFound)
	_, _, err = s.LookupToken(ctx, other.ConsumerKey, tok.TokenKey)
	wantErrIs(t, err, store.ErrNotFound)
}
