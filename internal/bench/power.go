package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
)

// PowerConfig says what the power benchmark measures.
type PowerConfig struct {
	Binary   string
	DBURL    string
	Machines int
	Kind     string // "ipmi" or "redfish"
	Workers  []int  // coordinator worker limits to compare
	Samples  int    // API-to-BMC latency samples
	Out      io.Writer
}

// PowerResult is one worker limit's figures.
type PowerResult struct {
	Workers       int
	Machines      int
	Kind          string
	SweepSeconds  float64 // until every BMC had been queried once
	SweepCPU      float64 // server CPU seconds during the sweep
	PeakRSSMiB    float64
	APIToBMC      Latency // from the API request to the BMC starting the command
	PollsPerSec   float64
	RegisterPerSc float64
}

// RunPower starts a lab fleet in this process and, for each worker limit,
// a fresh server that polls it with an interval short enough that every
// machine is due at once: the sweep then measures how fast Anvil can query
// the whole fleet under the worker and per-BMC limits.
func RunPower(ctx context.Context, cfg PowerConfig) ([]PowerResult, error) {
	var (
		mu        sync.Mutex
		firstPoll = map[string]time.Time{}
		lastPoll  time.Time
		polls     int
		waiters   = map[string]chan time.Time{}
	)
	log := &lab.Log{Discard: true, Hook: func(e lab.LogEntry) {
		mu.Lock()
		defer mu.Unlock()
		if e.Command == "status" {
			polls++
			if _, ok := firstPoll[e.Machine]; !ok {
				firstPoll[e.Machine] = e.Start
				lastPoll = e.Start
			}
			return
		}
		if ch, ok := waiters[e.Machine]; ok && (strings.HasPrefix(e.Command, "power") || strings.HasPrefix(e.Command, "reset")) {
			delete(waiters, e.Machine)
			ch <- e.Start
		}
	}}
	fc := fleet.Config{Log: log}
	if cfg.Kind == "redfish" {
		fc.RedfishChassis, fc.SystemsPerChassis = cfg.Machines/10, 10
	} else {
		fc.IPMI = cfg.Machines
	}
	f, err := fleet.Start(fc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	byHost := map[string]fleet.Machine{}
	for _, m := range f.Machines {
		byHost[m.Hostname] = m
	}

	var out []PowerResult
	for _, w := range cfg.Workers {
		mu.Lock()
		firstPoll, polls, lastPoll = map[string]time.Time{}, 0, time.Time{}
		mu.Unlock()
		fmt.Fprintf(cfg.Out, "power bench: %d %s BMCs, %d workers\n", len(f.Machines), cfg.Kind, w)
		// A 2 s interval: every machine is due within the first two
		// seconds, so the sweep is bounded by Anvil, not the schedule.
		srv, err := startServer(ctx, cfg.Binary, cfg.DBURL, w, "--power-poll-interval", "2s")
		if err != nil {
			return out, err
		}
		res := PowerResult{Workers: w, Machines: len(f.Machines), Kind: cfg.Kind}
		t0 := time.Now()
		ids, err := register(ctx, srv.caller, f.Machines)
		if err != nil {
			srv.stop()
			return out, err
		}
		res.RegisterPerSc = float64(len(ids)) / time.Since(t0).Seconds()
		cpu0, _ := cpuTime(srv.pid())
		start := time.Now()
		for {
			mu.Lock()
			n := len(firstPoll)
			mu.Unlock()
			if n >= len(f.Machines) {
				break
			}
			if time.Since(start) > 10*time.Minute {
				srv.stop()
				return out, fmt.Errorf("sweep incomplete after 10 minutes: %d of %d polled", n, len(f.Machines))
			}
			time.Sleep(50 * time.Millisecond)
		}
		cpu1, _ := cpuTime(srv.pid())
		mu.Lock()
		res.SweepSeconds = lastPoll.Sub(start).Seconds()
		res.PollsPerSec = float64(polls) / time.Since(start).Seconds()
		mu.Unlock()
		res.SweepCPU = (cpu1 - cpu0).Seconds()

		// API to BMC, with the monitor still polling everything.
		var lat []time.Duration
		rng := rand.New(rand.NewPCG(1, uint64(w)))
		hosts := make([]string, 0, len(ids))
		for h := range ids {
			hosts = append(hosts, h)
		}
		for i := 0; i < cfg.Samples; i++ {
			h := hosts[rng.IntN(len(hosts))]
			op := "power_on"
			if byHost[h].Sim.IsOn() {
				op = "power_off"
			}
			ch := make(chan time.Time, 1)
			mu.Lock()
			waiters[h] = ch
			mu.Unlock()
			t := time.Now()
			if err := srv.caller.post(ctx, "machines/"+ids[h]+"/?op="+op, url.Values{}); err != nil {
				srv.stop()
				return out, err
			}
			select {
			case at := <-ch:
				lat = append(lat, at.Sub(t))
			case <-time.After(30 * time.Second):
				srv.stop()
				return out, fmt.Errorf("%s of %s never reached its BMC", op, h)
			}
		}
		res.APIToBMC = summarise(lat)
		res.PeakRSSMiB, _ = peakRSS(srv.pid())
		srv.stop()
		out = append(out, res)
	}
	return out, nil
}

// register adds the fleet through the API and returns hostname → system_id.
func register(ctx context.Context, c *caller, ms []fleet.Machine) (map[string]string, error) {
	list, err := createMachines(ctx, c, len(ms), 8, func(i int) url.Values {
		m := ms[i]
		f := url.Values{"hostname": {m.Hostname}, "mac_addresses": {m.MAC}, "power_type": {m.PowerType}}
		for k, v := range m.Params {
			f.Set("power_parameters_"+k, v)
		}
		return f
	})
	ids := make(map[string]string, len(ms))
	for i, id := range list {
		if id != "" {
			ids[ms[i].Hostname] = id
		}
	}
	return ids, err
}

// PowerMarkdown renders power results for BENCHMARKS.md.
func PowerMarkdown(rs []PowerResult) string {
	var b strings.Builder
	b.WriteString("| BMCs | kind | workers | sweep | polls/s | server CPU during sweep | API→BMC p50 | API→BMC p99 | peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	for _, r := range rs {
		fmt.Fprintf(&b, "| %d | %s | %d | %.1f s | %.0f | %.1f s | %s | %s | %.0f MiB |\n",
			r.Machines, r.Kind, r.Workers, r.SweepSeconds, r.PollsPerSec, r.SweepCPU, ms(r.APIToBMC.P50), ms(r.APIToBMC.P99), r.PeakRSSMiB)
	}
	return b.String()
}
