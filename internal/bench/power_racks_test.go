package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
)

// TestPowerRacks runs the power sweep small over racks in this process:
// 50 BMCs, `anvil serve --remote-power` (built from this tree) and two
// enrolled racks. Every machine must be polled (RunPower fails
// otherwise), both racks must have run polls, and the latency samples
// must reach their BMCs. Nothing here is timed.
func TestPowerRacks(t *testing.T) {
	bin := buildAnvil(t)
	// A bound for a run that hangs, not a speed target.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var progress strings.Builder
	const machines, racks, workers = 50, 2, 4
	rs, err := RunPower(ctx, PowerConfig{Binary: bin, Machines: machines, Kind: "ipmi", Workers: []int{workers}, Racks: []int{racks}, Samples: 3, Out: &progress})
	t.Log("\n" + PowerRacksMarkdown(rs))
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	r := rs[0]
	if r.Racks != racks || len(r.PerRack) != racks {
		t.Fatalf("racks %d, polls per rack %v: want %d racks", r.Racks, r.PerRack, racks)
	}
	var sum int64
	for i, n := range r.PerRack {
		if n == 0 {
			t.Errorf("rack %d ran no poll during the sweep: %v", i+1, r.PerRack)
		}
		sum += n
	}
	// Each machine was polled in the sweep; a poll the driver began just
	// before it started (at most every slot's) may show at the BMC only.
	if sum < machines-racks*workers {
		t.Errorf("racks ran %d polls during the sweep of %d machines", sum, machines)
	}
	if r.APIToBMC.P50 <= 0 {
		t.Errorf("no API-to-BMC latency: %+v", r.APIToBMC)
	}
}

// TestPowerLogSince: polls that started before a reset are not the
// sweep's, and the sweep ends at the latest first poll, whatever order
// the BMCs log them in.
func TestPowerLogSince(t *testing.T) {
	t0 := time.Now()
	pl := &powerLog{waiters: map[string]chan time.Time{}}
	pl.reset(t0)
	for _, e := range []lab.LogEntry{
		{Machine: "a", Command: "status", Start: t0.Add(-time.Second)},
		{Machine: "b", Command: "status", Start: t0.Add(3 * time.Second)},
		{Machine: "c", Command: "status", Start: t0.Add(2 * time.Second)},
		{Machine: "b", Command: "status", Start: t0.Add(4 * time.Second)},
		{Machine: "c", Command: "power on", Start: t0.Add(5 * time.Second)},
	} {
		pl.hook(e)
	}
	if n := pl.polled(); n != 2 || pl.polls != 3 || !pl.lastPoll.Equal(t0.Add(3*time.Second)) {
		t.Errorf("polled %d machines in %d polls, last first poll %v after the reset; want 2, 3, 3s", n, pl.polls, pl.lastPoll.Sub(t0))
	}
}

func TestPowerRacksMarkdown(t *testing.T) {
	md := PowerRacksMarkdown([]PowerResult{
		{Run: 1, Workers: 16, Machines: 10, SweepSeconds: 1},
		{Run: 1, Racks: 2, Workers: 16, Machines: 10, SweepSeconds: 1, PerRack: []int64{6, 5}},
	})
	for _, want := range []string{"| 1 | in serve | 16 | 10 | 1.0 s |", "| 1 | 2 | 16 | 10 | 1.0 s | 0 | 6 / 5 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
}
