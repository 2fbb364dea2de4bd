package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFleet runs the power fleet scenario small: 50 BMCs, a tenth dead and
// a tenth slow, polled by `anvil serve` (built from this tree) with four
// workers while API clients read and power machines. The BMCs must never
// have held more sessions than the worker limit, nor two at once on one
// BMC, every sample machine that lost power must be powered back on, and
// no API request may fail. Nothing here is timed.
func TestFleet(t *testing.T) {
	bin := buildAnvil(t)
	// The bound is for a run that hangs, not a speed target: beside the
	// QEMU tests on two cores the same run takes several times as long.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var progress strings.Builder
	const workers = 4
	res, err := RunFleet(ctx, FleetConfig{
		Binary: bin, Machines: 50, Workers: workers, Interval: time.Second,
		DeadShare: 0.1, SlowShare: 0.1, SlowDelay: 50 * time.Millisecond,
		DriftSample: 5, DriftGrace: 2 * time.Second, Clients: 8, LoadFor: 3 * time.Second, Out: &progress,
	})
	t.Log("\n" + FleetMarkdown([]FleetResult{res}))
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if s := res.Sessions; s.MaxAll > workers || s.MaxOneBMC > 1 || s.Total == 0 {
		t.Errorf("BMCs saw %+v: want at most %d sessions at once, one per BMC", s, workers)
	}
	if res.DriftCorrected != res.DriftSample || res.DriftSample != 5 {
		t.Errorf("drift corrected on %d of %d machines", res.DriftCorrected, res.DriftSample)
	}
	if res.FailedRequests != 0 {
		t.Errorf("%d API requests failed: %+v", res.FailedRequests, res.API)
	}
	for _, o := range res.API {
		if o.N == 0 {
			t.Errorf("no %s request completed", o.Name)
		}
	}
}
