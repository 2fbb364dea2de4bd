package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// testRackEnrolment: a secret enrols one rack once (two presenting it at
// once: one wins), a lapsed or unknown one none; the credential is found
// by its token with its secret's hash only; a rack enrolling again under
// its name keeps its id and its old credential stops working; deleting a
// rack revokes its credential, and its touches and reports are then
// refused rather than recording it again.
func testRackEnrolment(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.EnrolRack(ctx, "no-such-secret", store.Rack{Hostname: "r1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown secret: %v", err)
	}
	lapsed, err := s.CreateRackSecret(ctx, "admin", time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnrolRack(ctx, lapsed, store.Rack{Hostname: "r1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lapsed secret: %v", err)
	}

	secret, err := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour))
	if err != nil || len(secret) < 32 {
		t.Fatalf("secret %q: %v", secret, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []store.RackCredential
		other []error
	)
	for _, host := range []string{"r1", "r2", "r3"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.EnrolRack(ctx, secret, store.Rack{Hostname: host, Address: "192.0.2.1", Version: "1"})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won = append(won, c)
			} else {
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || len(other) != 2 {
		t.Fatalf("one secret enrolled %d racks (errors %v)", len(won), other)
	}
	for _, err := range other {
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second use of a secret: %v", err)
		}
	}
	c := won[0]
	if c.RackID == "" || c.Secret == "" || c.SecretHash != store.HashSecret(c.Secret) {
		t.Fatalf("credential: %+v", c)
	}
	got, err := s.RackCredentialByToken(ctx, c.TokenKey)
	if err != nil || got.RackID != c.RackID || got.ConsumerKey != c.ConsumerKey || got.SecretHash != c.SecretHash || got.Secret != "" ||
		got.Hostname != c.Hostname {
		t.Fatalf("looked up %+v %v, want %+v without the secret", got, err, c)
	}
	racks, _ := s.ListRacks(ctx)
	if len(racks) != 1 || racks[0].SystemID != c.RackID || !racks[0].Enrolled || racks[0].Address != "192.0.2.1" {
		t.Fatalf("racks: %+v", racks)
	}

	// Enrolling under the name of a live rack: a second rack.
	second, _ := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour))
	twin, err := s.EnrolRack(ctx, second, store.Rack{Hostname: c.Hostname, Address: "192.0.2.2", Version: "1"})
	if err != nil || twin.RackID == c.RackID {
		t.Fatalf("a second rack of the same name: %+v %v", twin, err)
	}
	if _, err := s.RackCredentialByToken(ctx, c.TokenKey); err != nil {
		t.Fatalf("the live rack's credential was revoked by a namesake: %v", err)
	}
	if err := s.DeleteRack(ctx, twin.RackID); err != nil {
		t.Fatal(err)
	}
	// Under the name of one silent for longer than RackAlive (a rack
	// reinstalled): the same id, and the old key revoked.
	old := store.Rack{SystemID: c.RackID, Hostname: c.Hostname, Address: "192.0.2.1", Enrolled: true, Seen: time.Now().Add(-store.RackAlive - time.Minute)}
	if err := s.TouchRack(ctx, old); err != nil {
		t.Fatal(err)
	}
	again, _ := s.CreateRackSecret(ctx, "admin", time.Now().Add(time.Hour))
	c2, err := s.EnrolRack(ctx, again, store.Rack{Hostname: c.Hostname, Address: "192.0.2.9", Version: "2"})
	if err != nil || c2.RackID != c.RackID || c2.TokenKey == c.TokenKey {
		t.Fatalf("re-enrolled: %+v %v", c2, err)
	}
	if _, err := s.RackCredentialByToken(ctx, c.TokenKey); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old credential still works: %v", err)
	}
	// A claim of its power worker shows it alive.
	stale := old
	stale.Seen = time.Now().Add(-time.Hour)
	_ = s.TouchRack(ctx, stale)
	if err := s.NoteRackPower(ctx, store.RackPower{ID: c.RackID + ".1", Hostname: c.Hostname, SystemID: c.RackID}); err != nil {
		t.Fatal(err)
	}
	if racks, _ := s.ListRacks(ctx); len(racks) != 1 || time.Since(racks[0].Seen) > time.Minute {
		t.Fatalf("power claims did not show the rack alive: %+v", racks)
	}

	report := store.Rack{SystemID: c.RackID, Hostname: c.Hostname, Address: "192.0.2.9", Version: "2", Enrolled: true, Report: `{"services":[]}`}
	if err := s.ReportRack(ctx, report); err != nil {
		t.Fatal(err)
	}
	racks, _ = s.ListRacks(ctx)
	if len(racks) != 1 || racks[0].Report != report.Report || racks[0].Reported.IsZero() {
		t.Fatalf("after report: %+v", racks)
	}

	if err := s.DeleteRack(ctx, c.RackID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRack(ctx, c.RackID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted twice: %v", err)
	}
	if _, err := s.RackCredentialByToken(ctx, c2.TokenKey); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted rack's credential works: %v", err)
	}
	if err := s.TouchRack(ctx, report); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("touch of a deleted enrolled rack: %v", err)
	}
	if err := s.ReportRack(ctx, report); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("report of a deleted enrolled rack: %v", err)
	}
	if racks, _ := s.ListRacks(ctx); len(racks) != 0 {
		t.Fatalf("a deleted rack came back: %+v", racks)
	}
}
