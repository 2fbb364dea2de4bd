package power_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/powerroute"
)

// TestBusyRackStaysLive: a rack whose every slot is busy asks for no
// work, but it renews the leases of the commands it runs; while it does,
// requests for its BMCs are accepted. Once it is silent for longer than
// RackLive they are refused, in words.
func TestBusyRackStaysLive(t *testing.T) {
	f := newFake()
	st, ms := setup(t, f, 1, 1)
	const live = 400 * time.Millisecond
	c := startCoordinator(t, st, f, &results{}, power.Config{Racks: true, RackLive: live, Lease: 5 * time.Second})
	ctx := context.Background()
	bmc, err := c.BMCOf(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	k := power.RackClaim{ID: "rack-1", Hostname: "rack-1", Networks: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}
	if _, err := c.ClaimFor(ctx, k, 0); err == nil {
		t.Fatal("work claimed from an empty queue")
	}
	if _, _, err := c.Submit(ctx, ms[0], machine.PowerUp, "test", ""); err != nil {
		t.Fatal(err)
	}
	cl, err := c.ClaimFor(ctx, k, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Busy: no claims, renewals only, for three times RackLive and past
	// the second for which routes are cached.
	for end := time.Now().Add(1200 * time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := c.Renew(ctx, k.ID, cl.Request.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Routable(ctx, bmc.Key()); err != nil {
		t.Fatalf("a rack renewing its lease counts as gone: %v", err)
	}
	time.Sleep(live + 1100*time.Millisecond)
	var none *powerroute.NoRackError
	if err := c.Routable(ctx, bmc.Key()); !errors.As(err, &none) {
		t.Fatalf("a rack silent for longer than RackLive: %v", err)
	}
}
