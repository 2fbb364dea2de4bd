package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
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
	Workers  []int  // commands a rack runs at once (--power-workers), to compare
	// Racks are the rack counts to compare: 0 is the rack inside
	// `anvil serve`; N > 0 runs the region with --remote-power and N rack
	// power workers in this process (see startRacks). Empty: [0].
	Racks   []int
	Runs    int // times the whole comparison is repeated (default 1)
	Samples int // API-to-BMC latency samples
	// ProfileDir, if set, receives CPU profiles of each sweep: the
	// region's (its first regionProfileSeconds) and this process's.
	ProfileDir string
	Out        io.Writer
}

// PowerResult is one run's figures.
type PowerResult struct {
	Run           int
	Racks         int // 0: the rack inside `anvil serve`
	Workers       int // per rack
	Machines      int
	Kind          string
	SweepSeconds  float64 // until every BMC had been queried once
	SweepCPU      float64 // server CPU seconds during the sweep
	BenchCPU      float64 // this process's CPU seconds during the sweep: the BMCs, and the racks when Racks > 0
	PeakRSSMiB    float64
	APIToBMC      Latency // from the API request to the BMC starting the command
	PollsPerSec   float64
	RegisterPerSc float64
	// PerRack is how many BMC queries each bench rack ran during the
	// sweep (empty with the rack inside `anvil serve`).
	PerRack []int64
	// HostBusy is the share of the host's CPU time (all cores) busy
	// during the sweep, whoever used it: near 1, the sweep is CPU-bound.
	HostBusy float64
	// LoadBefore and LoadAfter are the 1-minute load average before the
	// server started and after the latency samples.
	LoadBefore, LoadAfter float64
}

// powerLog follows what the lab BMCs serve: each machine's first status
// query that started since the last reset, the queries counted, and a
// waiter per machine for its next power command.
type powerLog struct {
	mu        sync.Mutex
	since     time.Time
	firstPoll map[string]time.Time
	lastPoll  time.Time
	polls     int
	waiters   map[string]chan time.Time
}

func (p *powerLog) hook(e lab.LogEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Command == "status" {
		if e.Start.Before(p.since) {
			return
		}
		p.polls++
		if _, ok := p.firstPoll[e.Machine]; !ok {
			p.firstPoll[e.Machine] = e.Start
			if e.Start.After(p.lastPoll) {
				p.lastPoll = e.Start
			}
		}
		return
	}
	if ch, ok := p.waiters[e.Machine]; ok && (strings.HasPrefix(e.Command, "power") || strings.HasPrefix(e.Command, "reset")) {
		delete(p.waiters, e.Machine)
		ch <- e.Start
	}
}

// reset forgets the polls that started before since.
func (p *powerLog) reset(since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since, p.firstPoll, p.polls, p.lastPoll = since, map[string]time.Time{}, 0, time.Time{}
}

func (p *powerLog) polled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.firstPoll)
}

func (p *powerLog) wait(machine string) chan time.Time {
	ch := make(chan time.Time, 1)
	p.mu.Lock()
	p.waiters[machine] = ch
	p.mu.Unlock()
	return ch
}

// RunPower starts a lab fleet in this process and, for each rack count
// and worker limit (Runs times over), a fresh server that polls it with
// an interval short enough that every machine is due at once: the sweep
// then measures how fast Anvil can query the whole fleet under the worker
// and per-BMC limits.
func RunPower(ctx context.Context, cfg PowerConfig) ([]PowerResult, error) {
	pl := &powerLog{waiters: map[string]chan time.Time{}}
	pl.reset(time.Now())
	fc := fleet.Config{Log: &lab.Log{Discard: true, Hook: pl.hook}}
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
	racks := cfg.Racks
	if len(racks) == 0 {
		racks = []int{0}
	}
	var out []PowerResult
	for run := 1; run <= max(1, cfg.Runs); run++ {
		for _, n := range racks {
			for _, w := range cfg.Workers {
				res, err := powerRun(ctx, cfg, f, pl, PowerResult{Run: run, Racks: n, Workers: w, Machines: len(f.Machines), Kind: cfg.Kind})
				if err != nil {
					return out, err
				}
				out = append(out, res)
			}
		}
	}
	return out, nil
}

// powerRun is one server (and its racks) from start to stop.
func powerRun(ctx context.Context, cfg PowerConfig, f *fleet.Fleet, pl *powerLog, res PowerResult) (PowerResult, error) {
	where := "the rack in anvil serve"
	if res.Racks > 0 {
		where = fmt.Sprintf("%d racks in the bench", res.Racks)
	}
	res.LoadBefore = loadAverage()
	fmt.Fprintf(cfg.Out, "power bench run %d: %d %s BMCs, %s, %d workers each (load %.2f)\n",
		res.Run, res.Machines, cfg.Kind, where, res.Workers, res.LoadBefore)
	// A 2 s interval: every machine is due within the first two
	// seconds, so the sweep is bounded by Anvil, not the schedule.
	extra := []string{"--power-poll-interval", "2s"}
	if res.Racks > 0 {
		extra = append(extra, "--remote-power")
	}
	prof := &sweepProfiles{dir: cfg.ProfileDir, name: fmt.Sprintf("power-run%d-racks%d-workers%d", res.Run, res.Racks, res.Workers)}
	pargs, err := prof.serverArgs()
	if err != nil {
		return res, err
	}
	extra = append(extra, pargs...)
	srv, err := startServer(ctx, cfg.Binary, cfg.DBURL, res.Workers, extra...)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	var rs *benchRacks
	if res.Racks > 0 {
		// Started before the machines are added, as the rack in
		// `anvil serve` is, so that both are measured alike.
		if rs, err = startRacks(ctx, srv, res.Racks, res.Workers, cfg.Out); err != nil {
			return res, err
		}
		// Racks first: their commands in flight report to the region.
		defer rs.close()
	}
	t0 := time.Now()
	ids, err := register(ctx, srv.caller, f.Machines)
	if err != nil {
		return res, err
	}
	res.RegisterPerSc = float64(len(ids)) / time.Since(t0).Seconds()
	// The sweep starts once every machine is in: the polls made while
	// they were being added do not count, so that the sweep is a whole
	// pass over the fleet at the pace the limits allow, whatever the
	// pace of adding.
	cpu0, _ := cpuTime(srv.pid())
	self0, _ := cpuTime(os.Getpid())
	busy0, total0, _ := machineCPU()
	var perRack0 []int64
	if rs != nil {
		perRack0 = rs.counts()
	}
	start := time.Now()
	pl.reset(start)
	prof.start(ctx)
	defer prof.stopSelf()
	for n := pl.polled(); n < len(f.Machines); n = pl.polled() {
		if time.Since(start) > 10*time.Minute {
			return res, fmt.Errorf("sweep incomplete after 10 minutes: %d of %d polled", n, len(f.Machines))
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	cpu1, _ := cpuTime(srv.pid())
	self1, _ := cpuTime(os.Getpid())
	busy1, total1, _ := machineCPU()
	prof.stopSelf()
	res.HostBusy = busyShare(busy0, total0, busy1, total1)
	if rs != nil {
		for i, c := range rs.counts() {
			res.PerRack = append(res.PerRack, c-perRack0[i])
		}
	}
	pl.mu.Lock()
	res.SweepSeconds = pl.lastPoll.Sub(start).Seconds()
	res.PollsPerSec = float64(pl.polls) / time.Since(start).Seconds()
	pl.mu.Unlock()
	res.SweepCPU, res.BenchCPU = (cpu1 - cpu0).Seconds(), (self1 - self0).Seconds()

	if res.APIToBMC, err = apiToBMC(ctx, srv, f, pl, ids, cfg.Samples, uint64(res.Workers)); err != nil {
		return res, err
	}
	res.PeakRSSMiB, _ = peakRSS(srv.pid())
	res.LoadAfter = loadAverage()
	return res, prof.wait()
}

// apiToBMC sends power on/off requests through the API to random machines
// and times each from the request to the BMC starting the command, with
// the monitor still polling everything.
func apiToBMC(ctx context.Context, srv *server, f *fleet.Fleet, pl *powerLog, ids map[string]string, samples int, seed uint64) (Latency, error) {
	byHost := map[string]fleet.Machine{}
	for _, m := range f.Machines {
		byHost[m.Hostname] = m
	}
	hosts := make([]string, 0, len(ids))
	for h := range ids {
		hosts = append(hosts, h)
	}
	var lat []time.Duration
	rng := rand.New(rand.NewPCG(1, seed))
	for i := 0; i < samples; i++ {
		h := hosts[rng.IntN(len(hosts))]
		op := "power_on"
		if byHost[h].Sim.IsOn() {
			op = "power_off"
		}
		ch := pl.wait(h)
		t := time.Now()
		if err := srv.caller.post(ctx, "machines/"+ids[h]+"/?op="+op, url.Values{}); err != nil {
			return Latency{}, err
		}
		select {
		case at := <-ch:
			lat = append(lat, at.Sub(t))
		case <-time.After(30 * time.Second):
			return Latency{}, fmt.Errorf("%s of %s never reached its BMC", op, h)
		}
	}
	return summarise(lat), nil
}

// loadAverage is the 1-minute load average (0 when unreadable).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(string(b), &l)
	return l
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
	for _, r := range rs {
		fmt.Fprintf(&b, "| %d | %s | %d | %.1f s | %.0f | %.1f s | %s | %s | %.0f MiB |\n",
			r.Machines, r.Kind, r.Workers, r.SweepSeconds, r.PollsPerSec, r.SweepCPU, ms(r.APIToBMC.P50), ms(r.APIToBMC.P99), r.PeakRSSMiB)
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
