package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/anvilmetal/anvil/internal/client"
	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/rack"
	"github.com/anvilmetal/anvil/internal/serve"
)

// labBMCNetwork is the network the lab fleet's BMCs listen on (fleet's
// default host, 127.0.0.1): the BMC network every bench rack declares, as
// an operator declares a rack's --bmc-network. A declared network (not
// "every BMC") is what racks at a site have, and it makes the region
// route each claim by it.
var labBMCNetwork = netip.MustParsePrefix("127.0.0.0/8")

// benchRacks are rack power workers in this process, each enrolled with
// the region as a rack elsewhere is (a one-time secret from
// rackcontrollers/ op=enrol_secret, spent on rack/ op=enrol) and claiming
// with its own id and credential over the region's API, as `anvil rack`
// does.
type benchRacks struct {
	workers []*rack.PowerWorker
	queries []*atomic.Int64 // BMC queries each rack's drivers ran
}

// startRacks enrols and starts n racks, each running up to concurrency
// commands at once; log warnings go to out.
func startRacks(ctx context.Context, srv *server, n, concurrency int, out io.Writer) (*benchRacks, error) {
	rs := &benchRacks{}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	for i := range n {
		host := fmt.Sprintf("bench-rack-%d", i+1)
		creds, err := enrolRack(ctx, srv, host)
		if err != nil {
			rs.close()
			return nil, err
		}
		cl, err := client.New(srv.base, creds.APIKey)
		if err != nil {
			rs.close()
			return nil, err
		}
		cl.UserAgent = rack.RackAgent + serve.Version
		count := &atomic.Int64{}
		w, err := rack.StartPower(ctx, cl, rack.PowerConfig{
			ID: rack.PowerIDFor(creds.SystemID), Networks: []netip.Prefix{labBMCNetwork},
			Drivers: countQueries(serve.Drivers(), count), Power: power.Config{Workers: concurrency},
			Concurrency: concurrency, Log: log.With("rack", host),
		})
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("start %s: %w", host, err)
		}
		rs.workers, rs.queries = append(rs.workers, w), append(rs.queries, count)
	}
	return rs, nil
}

// enrolRack gets a one-time secret with the bench's administrator key
// and spends it for the rack's own credential.
func enrolRack(ctx context.Context, srv *server, host string) (rack.Credentials, error) {
	// The secret grants the rack the lab's BMC network, which it declares.
	b, err := srv.caller.postBody(ctx, "rackcontrollers/?op=enrol_secret", url.Values{"expires_in": {"600"}, "bmc_networks": {labBMCNetwork.String()}})
	if err != nil {
		return rack.Credentials{}, fmt.Errorf("enrolment secret for %s: %w", host, err)
	}
	var sec struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(b, &sec); err != nil || sec.Secret == "" {
		return rack.Credentials{}, fmt.Errorf("enrolment secret for %s: unreadable answer %.200q", host, b)
	}
	return rack.Enrol(ctx, srv.base, "", sec.Secret, host, serve.Version)
}

// counts are the BMC queries each rack has run so far.
func (rs *benchRacks) counts() []int64 {
	out := make([]int64, len(rs.queries))
	for i, q := range rs.queries {
		out[i] = q.Load()
	}
	return out
}

// close stops every rack, waiting for their commands in flight to be
// reported: before the region stops, or a report would retry for ever.
func (rs *benchRacks) close() {
	for _, w := range rs.workers {
		w.Close()
	}
	rs.workers = nil
}

// countQueries wraps the drivers that can query so that each query adds
// one to n: which rack ran a poll is known only to the rack.
func countQueries(r power.Registry, n *atomic.Int64) power.Registry {
	out := power.Registry{}
	for name, d := range r {
		if r.Queryable(name) {
			d = countingDriver{Driver: d, n: n}
		}
		out[name] = d
	}
	return out
}

type countingDriver struct {
	power.Driver
	n *atomic.Int64
}

func (d countingDriver) Query(ctx context.Context, p map[string]string) (machine.PowerState, error) {
	d.n.Add(1)
	return d.Driver.Query(ctx, p)
}

// PowerRacksMarkdown renders a comparison of rack counts: the power
// table with the racks, how the sweep's polls were spread over them, the
// bench process's CPU (BMCs and racks) and the load average.
func PowerRacksMarkdown(rs []PowerResult) string {
	var b strings.Builder
	b.WriteString("| run | racks | workers per rack | BMCs | sweep | polls/s | polls per rack during sweep | region CPU | BMC+rack process CPU | host CPU busy | API→BMC p50 | API→BMC p99 | region peak RSS | load before → after |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		racks, per := "in serve", "-"
		if r.Racks > 0 {
			racks = fmt.Sprint(r.Racks)
			parts := make([]string, len(r.PerRack))
			for i, n := range r.PerRack {
				parts[i] = fmt.Sprint(n)
			}
			per = strings.Join(parts, " / ")
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %.1f s | %.0f | %s | %.1f s | %.1f s | %.0f%% | %s | %s | %.0f MiB | %.1f → %.1f |\n",
			r.Run, racks, r.Workers, r.Machines, r.SweepSeconds, r.PollsPerSec, per, r.SweepCPU, r.BenchCPU, 100*r.HostBusy,
			ms(r.APIToBMC.P50), ms(r.APIToBMC.P99), r.PeakRSSMiB, r.LoadBefore, r.LoadAfter)
	}
	return b.String()
}
