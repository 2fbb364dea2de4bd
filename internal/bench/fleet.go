package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/lab"
	"github.com/anvilmetal/anvil/internal/lab/fleet"
)

// FleetConfig says what the power fleet scenario runs.
type FleetConfig struct {
	Binary   string
	DBURL    string // "" for SQLite
	Machines int
	// Workers is the server's --power-workers (16 is its default); one
	// session per BMC is not configurable.
	Workers int
	// Interval is the server's --power-poll-interval. The default, 2 s,
	// keeps every machine due all the time, so that the sweep shows what
	// the limits allow and the API runs beside a monitor that never rests.
	Interval time.Duration
	// DeadShare and SlowShare of the BMCs never answer, or answer every
	// packet after SlowDelay.
	DeadShare, SlowShare float64
	SlowDelay            time.Duration
	// DriftSample machines are powered on through the API, then lose
	// power behind Anvil's back once Anvil has seen them on; the drift
	// policy (enforce, the default) must power them back on.
	DriftSample int
	// DriftGrace is the server's --drift-grace.
	DriftGrace time.Duration
	// Clients run API requests for LoadFor while the fleet is polled: an
	// eighth list every machine, a quarter list filtered by hostname,
	// three eighths read one machine, a quarter power machines on and off.
	Clients int
	LoadFor time.Duration
	// ProfileDir, if set, receives a CPU profile of the server taken
	// during the API load and a heap profile at the end.
	ProfileDir string
	Out        io.Writer
}

func (c *FleetConfig) defaults() {
	if c.Workers <= 0 {
		c.Workers = 16
	}
	if c.Interval <= 0 {
		c.Interval = 2 * time.Second
	}
	if c.SlowDelay <= 0 {
		c.SlowDelay = 200 * time.Millisecond
	}
	if c.DriftGrace <= 0 {
		c.DriftGrace = 10 * time.Second
	}
	if c.Clients <= 0 {
		c.Clients = 32
	}
	if c.LoadFor <= 0 {
		c.LoadFor = 30 * time.Second
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

// FleetResult holds one run's figures.
type FleetResult struct {
	Database             string
	Machines, Dead, Slow int
	Workers, Clients     int
	Interval             time.Duration
	RegisterPerSec       float64
	// Sweep is the time, from the moment every machine was registered,
	// until each answering BMC had served a status query.
	Sweep       time.Duration
	PollsPerSec float64 // status queries the BMCs served per second over the run
	// Sessions as the BMCs counted them over the whole run.
	Sessions lab.SessionStats
	// Drift: how many sample machines were turned off behind Anvil's
	// back, how many Anvil powered back on, and how long that took.
	DriftSample, DriftCorrected int
	// DriftReasked counts power-ons of the sample asked again because
	// the BMC never saw the first.
	DriftReasked int
	DriftFix     Latency
	// API under load; ToBMC is from a power request to its BMC starting
	// the command.
	API          []OpStats
	ToBMC        Latency
	ToBMCN       int
	LoadDuration time.Duration
	// Server process figures.
	CPUSeconds     float64 // user+system over the whole run (startup to end)
	CPUSweep       float64 // during the sweep
	CPULoad        float64 // during the API load
	PeakRSSMiB     float64
	Profiles       []string
	RunSeconds     float64
	FailedRequests int
}

// OpStats is one kind of API request under load.
type OpStats struct {
	Name    string
	N       int
	Errors  int
	Latency Latency
	PerSec  float64
}

// RunFleet runs one power fleet scenario: a lab fleet of IPMI BMCs (some
// dead, some slow) polled by a fresh `anvil serve`, the BMC sessions it
// opens counted on the BMC side, a drift sample corrected, and API
// clients hammering the region meanwhile.
func RunFleet(ctx context.Context, cfg FleetConfig) (FleetResult, error) {
	cfg.defaults()
	t0 := time.Now()
	res := FleetResult{Database: "sqlite", Workers: cfg.Workers, Clients: cfg.Clients, Interval: cfg.Interval}
	if cfg.DBURL != "" {
		res.Database = "postgresql"
	}
	var (
		mu        sync.Mutex
		polled    = map[string]bool{} // since the sweep began
		sweeping  bool
		lastFirst time.Time
		polls     int
		inSample  = map[string]bool{}
		seenOn    = map[string]int{}       // drift sample: status queries since power came on
		failedAt  = map[string]time.Time{} // drift sample: when power was lost
		fixedIn   = map[string]time.Duration{}
	)
	meter := lab.NewSessionMeter()
	asked := &pendingAsks{at: map[string]time.Time{}}
	log := &lab.Log{Discard: true, Hook: func(e lab.LogEntry) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Command == "status":
			polls++
			if sweeping && !polled[e.Machine] {
				polled[e.Machine] = true
				lastFirst = e.Start
			}
			if _, on := seenOn[e.Machine]; on {
				seenOn[e.Machine]++
			}
		case e.Command == "power on" || e.Command == "power off":
			asked.started(e.Machine, e.Start)
			if e.Command != "power on" {
				return
			}
			if inSample[e.Machine] {
				if _, on := seenOn[e.Machine]; !on {
					seenOn[e.Machine] = 0
				}
			}
			if at, ok := failedAt[e.Machine]; ok {
				if _, done := fixedIn[e.Machine]; !done && e.Start.After(at) {
					fixedIn[e.Machine] = e.Start.Sub(at)
				}
			}
		}
	}}
	f, err := fleet.Start(fleet.Config{
		IPMI: cfg.Machines, Log: log, Sessions: meter,
		DeadShare: cfg.DeadShare, SlowShare: cfg.SlowShare, SlowDelay: cfg.SlowDelay, Seed: 7,
	})
	if err != nil {
		return res, err
	}
	defer f.Close()
	res.Machines = len(f.Machines)
	var answering, healthy []fleet.Machine
	for _, m := range f.Machines {
		switch m.Faults {
		case "dead":
			res.Dead++
		case "slow":
			res.Slow++
		}
		if m.Faults != "dead" {
			answering = append(answering, m)
		}
		if m.Faults == "" {
			healthy = append(healthy, m)
		}
	}
	fmt.Fprintf(cfg.Out, "fleet: %d IPMI BMCs (%d dead, %d slow), %s, %d workers, interval %s\n",
		res.Machines, res.Dead, res.Slow, res.Database, cfg.Workers, cfg.Interval)

	pprofPort, err := freePort()
	if err != nil {
		return res, err
	}
	srv, err := startServer(ctx, cfg.Binary, cfg.DBURL, cfg.Workers,
		"--power-poll-interval", cfg.Interval.String(), "--drift-grace", cfg.DriftGrace.String(),
		"--pprof-listen", "127.0.0.1:"+pprofPort)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	cpuStart, _ := cpuTime(srv.pid())
	cpuAt := func() float64 { d, _ := cpuTime(srv.pid()); return (d - cpuStart).Seconds() }

	// Register. The monitor starts on machines as they appear.
	tReg := time.Now()
	ids, err := register(ctx, srv.caller, f.Machines)
	if err != nil {
		return res, fmt.Errorf("register: %w", err)
	}
	res.RegisterPerSec = float64(len(ids)) / time.Since(tReg).Seconds()
	fmt.Fprintf(cfg.Out, "fleet: registered %d machines in %s\n", len(ids), time.Since(tReg).Round(time.Millisecond))

	// The drift sample and the machines the API load powers on and off
	// are disjoint sets of healthy machines.
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(healthy), func(i, j int) { healthy[i], healthy[j] = healthy[j], healthy[i] })
	sample := healthy[:min(cfg.DriftSample, len(healthy)/2)]
	toggled := healthy[len(sample):]
	mu.Lock()
	for _, m := range sample {
		inSample[m.Hostname] = true
	}
	mu.Unlock()
	tAsk := time.Now()
	for _, m := range sample {
		if err := srv.caller.post(ctx, "machines/"+ids[m.Hostname]+"/?op=power_on", url.Values{}); err != nil {
			return res, fmt.Errorf("power on %s: %w", m.Hostname, err)
		}
	}

	// Sweep: every answering BMC queried once, from now.
	mu.Lock()
	sweeping, polls = true, 0
	mu.Unlock()
	tSweep := time.Now()
	cpuSweep0 := cpuAt()
	for {
		mu.Lock()
		n := 0
		for _, m := range answering {
			if polled[m.Hostname] {
				n++
			}
		}
		last := lastFirst
		mu.Unlock()
		if n == len(answering) {
			res.Sweep = last.Sub(tSweep)
			break
		}
		if time.Since(tSweep) > 15*time.Minute {
			return res, fmt.Errorf("sweep incomplete after 15 minutes: %d of %d answering BMCs queried", n, len(answering))
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return res, fmt.Errorf("sweep: %d of %d answering BMCs queried: %w", n, len(answering), err)
		}
	}
	res.CPUSweep = cpuAt() - cpuSweep0
	fmt.Fprintf(cfg.Out, "fleet: sweep %s\n", res.Sweep.Round(time.Millisecond))

	// API load, with the drift sample failing in the middle of it.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	ops := newLoad(srv.caller, ids, toggled, asked)
	tLoad := time.Now()
	cpuLoad0 := cpuAt()
	for i := 0; i < cfg.Clients; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); ops.client(loadCtx, i) }(i)
	}
	if cfg.ProfileDir != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			secs := max(int(cfg.LoadFor.Seconds())-2, 1)
			p := filepath.Join(cfg.ProfileDir, "fleet-"+res.Database+"-cpu.pprof")
			if err := fetchTo(ctx, fmt.Sprintf("http://127.0.0.1:%s/debug/pprof/profile?seconds=%d", pprofPort, secs), p); err != nil {
				fmt.Fprintf(cfg.Out, "fleet: cpu profile: %v\n", err)
				return
			}
			mu.Lock()
			res.Profiles = append(res.Profiles, p)
			mu.Unlock()
		}()
	}

	// Drift: wait out the grace period of the asks, and until Anvil has
	// read every sample machine on twice (the debounce), then cut their
	// power.
	if len(sample) > 0 {
		if err := sleep(ctx, time.Until(tAsk.Add(cfg.DriftGrace+2*cfg.Interval))); err != nil {
			return res, err
		}
		reasked := time.Now()
		for {
			mu.Lock()
			ready := 0
			var waiting []fleet.Machine
			for _, m := range sample {
				if seenOn[m.Hostname] >= 2 {
					ready++
				} else if _, on := seenOn[m.Hostname]; !on {
					waiting = append(waiting, m)
				}
			}
			mu.Unlock()
			if ready == len(sample) {
				break
			}
			// A power on the BMC never saw (its request failed: on two
			// busy cores IPMI sessions time out) is asked again, as an
			// operator would; the run says how often.
			if time.Since(reasked) > 30*time.Second && len(waiting) > 0 {
				for _, m := range waiting {
					if err := srv.caller.post(ctx, "machines/"+ids[m.Hostname]+"/?op=power_on", url.Values{}); err != nil {
						return res, fmt.Errorf("power on %s again: %w", m.Hostname, err)
					}
					res.DriftReasked++
				}
				fmt.Fprintf(cfg.Out, "fleet: asked %d sample machine(s) to power on again\n", len(waiting))
				reasked = time.Now()
			}
			if time.Since(tAsk) > 15*time.Minute {
				return res, fmt.Errorf("drift sample: only %d of %d machines were powered on and read twice", ready, len(sample))
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return res, fmt.Errorf("drift sample: %d of %d machines powered on and read twice: %w", ready, len(sample), err)
			}
		}
		mu.Lock()
		now := time.Now()
		for _, m := range sample {
			m.Sim.Fail()
			failedAt[m.Hostname] = now
		}
		mu.Unlock()
		fmt.Fprintf(cfg.Out, "fleet: %d sample machines lost power\n", len(sample))
	}
	if err := sleep(ctx, time.Until(tLoad.Add(cfg.LoadFor))); err != nil {
		return res, err
	}
	stopLoad()
	wg.Wait()
	res.LoadDuration = time.Since(tLoad)
	res.CPULoad = cpuAt() - cpuLoad0
	res.API, res.FailedRequests = ops.stats(res.LoadDuration)
	if lat := asked.latencies(); len(lat) > 0 {
		res.ToBMC, res.ToBMCN = summarise(lat), len(lat)
	}

	// Drift: wait for every correction (or give up after ten sweeps).
	deadline := time.Now().Add(max(10*res.Sweep, 10*cfg.Interval, 2*time.Minute))
	for len(sample) > 0 {
		mu.Lock()
		n := len(fixedIn)
		mu.Unlock()
		if n == len(sample) || time.Now().After(deadline) {
			break
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return res, fmt.Errorf("drift: %d of %d machines powered back on: %w", n, len(sample), err)
		}
	}
	mu.Lock()
	var fix []time.Duration
	for _, d := range fixedIn {
		fix = append(fix, d)
	}
	res.PollsPerSec = float64(polls) / time.Since(tSweep).Seconds()
	mu.Unlock()
	res.DriftSample, res.DriftCorrected = len(sample), len(fix)
	if len(fix) > 0 {
		res.DriftFix = summarise(fix)
	}
	res.Sessions = meter.Stats()
	if cfg.ProfileDir != "" {
		p := filepath.Join(cfg.ProfileDir, "fleet-"+res.Database+"-heap.pprof")
		if err := fetchTo(ctx, "http://127.0.0.1:"+pprofPort+"/debug/pprof/heap", p); err == nil {
			res.Profiles = append(res.Profiles, p)
		}
	}
	res.CPUSeconds = cpuAt()
	res.PeakRSSMiB, _ = peakRSS(srv.pid())
	res.RunSeconds = time.Since(t0).Seconds()
	return res, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func fetchTo(ctx context.Context, u, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// load is the API clients' work: closed-loop clients, each doing one kind
// of request as fast as the server answers.
type load struct {
	c       *caller
	asked   *pendingAsks
	ids     map[string]string // hostname → system_id
	hosts   []string
	toggled []fleet.Machine

	mu   sync.Mutex
	lat  map[string][]time.Duration
	errs map[string]int
	last map[string]error
}

// loadKinds are the request kinds; client i runs loadKinds[i%8].
var loadKinds = [8]string{"list all", "list filtered", "list filtered", "read", "read", "read", "power on/off", "power on/off"}

func newLoad(c *caller, ids map[string]string, toggled []fleet.Machine, asked *pendingAsks) *load {
	l := &load{c: c, asked: asked, ids: ids, toggled: toggled, lat: map[string][]time.Duration{}, errs: map[string]int{}, last: map[string]error{}}
	for h := range ids {
		l.hosts = append(l.hosts, h)
	}
	sort.Strings(l.hosts)
	return l
}

func (l *load) client(ctx context.Context, i int) {
	kind := loadKinds[i%len(loadKinds)]
	rng := rand.New(rand.NewPCG(uint64(i), 11))
	on := map[string]bool{}
	for ctx.Err() == nil {
		var err error
		t := time.Now()
		switch kind {
		case "list all":
			err = l.c.discard(ctx, "machines/")
		case "list filtered":
			err = l.c.discard(ctx, "machines/?hostname="+l.hosts[rng.IntN(len(l.hosts))])
		case "read":
			err = l.c.discard(ctx, "machines/"+l.ids[l.hosts[rng.IntN(len(l.hosts))]]+"/")
		case "power on/off":
			if len(l.toggled) == 0 {
				return
			}
			m := l.toggled[rng.IntN(len(l.toggled))]
			op := "power_on"
			if on[m.Hostname] {
				op = "power_off"
			}
			on[m.Hostname] = !on[m.Hostname]
			l.asked.ask(m.Hostname, t)
			err = l.c.post(ctx, "machines/"+l.ids[m.Hostname]+"/?op="+op, url.Values{})
		}
		d := time.Since(t)
		if ctx.Err() != nil {
			return // cut off by the end of the run: not a result
		}
		l.mu.Lock()
		if err != nil {
			l.errs[kind]++
			l.last[kind] = err
		} else {
			l.lat[kind] = append(l.lat[kind], d)
		}
		l.mu.Unlock()
	}
}

func (l *load) stats(over time.Duration) ([]OpStats, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []OpStats
	failed := 0
	seen := map[string]bool{}
	for _, k := range loadKinds {
		if seen[k] {
			continue
		}
		seen[k] = true
		s := OpStats{Name: k, N: len(l.lat[k]), Errors: l.errs[k], PerSec: float64(len(l.lat[k])) / over.Seconds()}
		if s.N > 0 {
			s.Latency = summarise(l.lat[k])
		}
		failed += s.Errors
		out = append(out, s)
	}
	return out, failed
}

// pendingAsks times power requests from the API call to the BMC.
type pendingAsks struct {
	mu  sync.Mutex
	at  map[string]time.Time
	lat []time.Duration
}

func (p *pendingAsks) ask(machine string, t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, waiting := p.at[machine]; !waiting {
		p.at[machine] = t
	}
}

func (p *pendingAsks) started(machine string, t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.at[machine]; ok {
		delete(p.at, machine)
		p.lat = append(p.lat, t.Sub(at))
	}
}

func (p *pendingAsks) latencies() []time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.lat...)
}

// discard GETs path and reads the answer without keeping it.
func (c *caller) discard(ctx context.Context, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	req.Header.Set("Authorization", c.auth)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// FleetMarkdown renders fleet results for BENCHMARKS.md: one table of the
// power figures and the server's cost, one of the API under load.
func FleetMarkdown(rs []FleetResult) string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	b.WriteString("| database | BMCs (dead, slow) | workers | sweep | queries/s | max sessions, all BMCs | max sessions, one BMC | drift corrected | time to correction p50 / max | region CPU (sweep, load) | peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fix := "—"
		if r.DriftCorrected > 0 {
			fix = sec(r.DriftFix.P50) + " / " + sec(r.DriftFix.Max)
		}
		fmt.Fprintf(&b, "| %s | %d (%d, %d) | %d | %s | %.0f | %d (limit %d) | %d (limit 1) | %d of %d | %s | %.0f s (%.0f s, %.0f s) | %.0f MiB |\n",
			r.Database, r.Machines, r.Dead, r.Slow, r.Workers, sec(r.Sweep), r.PollsPerSec,
			r.Sessions.MaxAll, r.Workers, r.Sessions.MaxOneBMC, r.DriftCorrected, r.DriftSample, fix,
			r.CPUSeconds, r.CPUSweep, r.CPULoad, r.PeakRSSMiB)
	}
	b.WriteString("\n| database | request | clients | requests | errors | p50 | p99 | max | per second |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		for _, o := range r.API {
			clients := 0
			for i := 0; i < r.Clients; i++ {
				if loadKinds[i%len(loadKinds)] == o.Name {
					clients++
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s | %s | %.0f |\n",
				r.Database, apiLabel(o.Name), clients, o.N, o.Errors, ms(o.Latency.P50), ms(o.Latency.P99), ms(o.Latency.Max), o.PerSec)
		}
		if r.ToBMCN > 0 {
			fmt.Fprintf(&b, "| %s | power request to its BMC command | | %d | | %s | %s | %s | |\n",
				r.Database, r.ToBMCN, ms(r.ToBMC.P50), ms(r.ToBMC.P99), ms(r.ToBMC.Max))
		}
	}
	return b.String()
}

func apiLabel(kind string) string {
	switch kind {
	case "list all":
		return "`GET machines/` (all)"
	case "list filtered":
		return "`GET machines/?hostname=…`"
	case "read":
		return "`GET machines/<id>/`"
	case "power on/off":
		return "`POST machines/<id>/?op=power_on` / `power_off`"
	}
	return kind
}
