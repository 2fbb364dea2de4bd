package rack_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os/exec"
	"testing"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/region"
	"github.com/anvilmetal/anvil/internal/serve"
	"github.com/anvilmetal/anvil/internal/store"
	"github.com/anvilmetal/anvil/internal/testutil/simbmc"
)

// BenchmarkPowerQuery: one power query, from the coordinator's Do (what
// the API's query_power_state calls) to an ipmi_sim BMC on loopback and
// back, run by the rack of `anvil serve` through the power work API
// ("rack"), and by a coordinator running its own workers, as regions ran
// every command before racks did ("region").
//
//	go test -run '^$' -bench BenchmarkPowerQuery -benchtime 200x ./internal/rack/
func BenchmarkPowerQuery(b *testing.B) {
	if _, err := exec.LookPath("ipmi_sim"); err != nil {
		b.Skip("ipmi_sim is not installed")
	}
	b.Run("rack", func(b *testing.B) {
		srv, m := benchRegion(b, serve.RackPower{})
		benchQueries(b, srv.Service.Power, m)
	})
	b.Run("region", func(b *testing.B) {
		srv, m := benchRegion(b, serve.RackPower{Remote: true})
		// A second coordinator on the same database with workers of its
		// own: the region's path before racks.
		svc := region.New(srv.Store, serve.Drivers(), machine.DefaultConfig(), power.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); svc.Power.Run(ctx) }()
		defer func() { cancel(); <-done }()
		benchQueries(b, svc.Power, m)
	})
}

func benchRegion(b *testing.B, rp serve.RackPower) (*serve.Server, machine.Machine) {
	ctx := context.Background()
	dir := b.TempDir()
	srv, err := serve.Start(ctx, serve.Config{DataDir: dir, Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RackPower: rp})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close(context.Background()) })
	key, err := serve.APIKey(ctx, dir, "", "admin")
	if err != nil {
		b.Fatal(err)
	}
	cl, err := client.New("http://"+srv.Addr.String()+"/MAAS/", key)
	if err != nil {
		b.Fatal(err)
	}
	sim := simbmc.Start(b, simbmc.Config{Addr: "127.0.0.1"})
	form := url.Values{"hostname": {"bench"}, "architecture": {"amd64/generic"}, "mac_addresses": {"52:54:00:79:00:01"}}
	for k, v := range sim.Params() {
		form[k] = v
	}
	cm, err := cl.CreateMachine(ctx, form)
	if err != nil {
		b.Fatal(err)
	}
	m, err := srv.Store.GetMachine(ctx, cm.SystemID)
	if err != nil {
		b.Fatal(err)
	}
	return srv, m
}

func benchQueries(b *testing.B, c *power.Coordinator, m machine.Machine) {
	ctx := context.Background()
	run := func() {
		r, err := c.Do(ctx, m, power.QueryAction, "", "bench")
		if err != nil || r.State != store.PowerDone || r.ResultState != string(machine.PowerOff) {
			b.Fatalf("query: %+v %v", r, err)
		}
	}
	run() // the first login and the new BMC's query out of the way
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
}
