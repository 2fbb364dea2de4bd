package region

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store/open"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestSingletonWorkMovesOnWhenItsRegionDies: of two regions on one
// database one leads a piece of singleton work and keeps it while it
// renews; once it stops (killed), the other takes the work over when the
// lease runs out, not before, and the first, back, does not take it back.
func TestSingletonWorkMovesOnWhenItsRegionDies(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { singletonTakeover(t, "") })
	t.Run("postgres", func(t *testing.T) { singletonTakeover(t, pgtest.URL(t)) })
}

func singletonTakeover(t *testing.T, dbURL string) {
	ctx := context.Background()
	dir := t.TempDir()
	sealer, err := secret.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := open.Open(ctx, dbURL, dir, sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Now().UTC()
	clock := func() time.Time { return now }
	region := func(name string) *Service {
		return &Service{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock, LeaseHolder: name}
	}
	a, b := region("a"), region("b")
	const every = 10 * time.Second
	if !a.leads(ctx, "status-monitor", every) || b.leads(ctx, "status-monitor", every) {
		t.Fatal("not exactly one region leads")
	}
	for range 5 { // a renews round after round
		now = now.Add(every)
		if !a.leads(ctx, "status-monitor", every) || b.leads(ctx, "status-monitor", every) {
			t.Fatalf("the lead moved while its region renewed it (at %s)", now)
		}
	}
	// a dies: b waits out the lease, then takes over.
	now = now.Add(leaseTTL(every) - time.Second)
	if b.leads(ctx, "status-monitor", every) {
		t.Fatal("taken over before the lease ran out")
	}
	now = now.Add(2 * time.Second)
	if !b.leads(ctx, "status-monitor", every) {
		t.Fatal("not taken over after the lease ran out")
	}
	if a.leads(ctx, "status-monitor", every) {
		t.Fatal("the old leader took the work back")
	}
	// Other work has its own lease.
	if !a.leads(ctx, "pruner", every) {
		t.Fatal("one lease held kept another from being taken")
	}
}
