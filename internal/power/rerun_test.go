package power_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/power/ipmi"
	"github.com/anvilmetal/anvil/internal/secret"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/store/open"
	"github.com/anvilmetal/anvil/internal/testutil/pgtest"
)

// TestRerunAfterLostLease: a region claims a cycle, marks it sent, sends
// it to a lab IPMI BMC over the LAN, and dies before it can record the
// end. Another region takes the request back when the lease runs out and
// must not cycle the machine a second time: it asks the BMC, finds it on,
// and completes. One that died after marking but before sending (the
// machine still off) gets the machine powered on, into the network boot,
// not cycled.
func TestRerunAfterLostLease(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { rerun(t, func(testing.TB) string { return "" }) })
	t.Run("postgres", func(t *testing.T) { rerun(t, pgtest.URL) })
}

// rerun runs the cases, each on a database of its own (db gives its URL).
func rerun(t *testing.T, db func(t testing.TB) string) {
	cases := []struct {
		name       string
		sentByDead bool // the dead region's cycle reached the BMC
		want       []string
		step       power.Step
	}{
		{"cycle reached the BMC", true, []string{"on", "cycle"}, power.StepDone},
		{"cycle never sent", false, []string{"on", "off", "on"}, power.StepNetOn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := &lab.Log{}
			f, err := fleet.Start(fleet.Config{IPMI: 1, User: "admin", Password: "password", Log: log})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			fm := f.Machines[0]
			ctx := context.Background()
			drv := ipmi.Driver{}
			if err := drv.PowerOn(ctx, fm.Params); err != nil {
				t.Fatal(err)
			}
			if !tc.sentByDead {
				// The machine went off before the dead region's cycle,
				// which never left it.
				if err := drv.PowerOff(ctx, fm.Params, false); err != nil {
					t.Fatal(err)
				}
			}
			st := openStore(t, db(t))
			m := machine.Machine{Hostname: fm.Hostname, Architecture: "amd64/generic", PowerType: "ipmi", PowerParams: fm.Params,
				Interfaces: []machine.Interface{{Name: "eth0", MAC: fm.MAC}}}
			if err := st.CreateMachine(ctx, &m, nil); err != nil {
				t.Fatal(err)
			}
			bmc, _ := drv.BMC(fm.Params)
			r, _, err := st.EnqueuePower(ctx, store.PowerRequest{SystemID: m.SystemID, BMCKey: bmc.Key(), Action: string(machine.PowerRestart), RequestedBy: "t"})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			claimed, err := st.ClaimPower(ctx, "region-dead", now, now.Add(time.Second))
			if err != nil || claimed.ID != r.ID {
				t.Fatalf("claim: %+v %v", claimed, err)
			}
			if err := st.MarkPowerSent(ctx, r.ID, "region-dead", now); err != nil {
				t.Fatal(err)
			}
			if tc.sentByDead {
				if err := drv.PowerCycle(ctx, fm.Params); err != nil {
					t.Fatal(err)
				}
			}
			rep := &results{}
			c := power.NewCoordinator(st, power.NewRegistry(drv), rep, power.Config{Lease: 900 * time.Millisecond, Backoff: []time.Duration{50 * time.Millisecond}},
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { c.Run(runCtx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			defer wcancel()
			got, err := c.Wait(wctx, r.ID)
			if err != nil || got.State != store.PowerDone || got.Attempts != 2 || got.ResultState != string(machine.PowerOn) {
				t.Fatalf("re-run: %+v %v", got, err)
			}
			if ch := fm.Sim.Changes(); !slices.Equal(ch, tc.want) {
				t.Fatalf("the machine's power went %v, want %v", ch, tc.want)
			}
			var cmds []string
			for _, e := range log.Entries() {
				if e.Command != "status" {
					cmds = append(cmds, e.Command)
				}
			}
			if n := slices.Index(cmds, "power cycle"); n >= 0 && slices.Contains(cmds[n+1:], "power cycle") {
				t.Fatalf("the BMC was sent two cycles: %v", cmds)
			}
			if !tc.sentByDead && !slices.Equal(cmds[len(cmds)-2:], []string{"boot device", "power on"}) {
				t.Fatalf("the re-run sent %v, want the network boot set and power on last", cmds)
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(rep.all()) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if res := rep.all(); len(res) != 1 || res[0].Resumed != tc.step {
				t.Fatalf("results %+v, want one re-run that took step %s", res, tc.step)
			}
		})
	}
}

func openStore(t *testing.T, dbURL string) store.Store {
	t.Helper()
	dir := t.TempDir()
	sealer, err := secret.LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := open.Open(context.Background(), dbURL, dir, sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
