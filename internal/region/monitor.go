package region

import (
	"context"
	mrand "math/rand/v2"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/power"
	"github.com/anvilmetal/anvil/internal/store"
)

// MonitorConfig tunes the power monitor.
type MonitorConfig struct {
	// Interval is how often each machine's BMC is polled.
	Interval time.Duration
	// MaxBackoff caps how rarely a BMC that keeps failing is polled.
	MaxBackoff time.Duration
	// Tick is how often the monitor looks for machines that are due.
	Tick time.Duration
	// Refresh is how often it re-reads the list of machines.
	Refresh time.Duration
}

// defaultPollInterval is MAAS's: every machine every five minutes.
const defaultPollInterval = 5 * time.Minute

func (c *MonitorConfig) defaults() {
	if c.Interval <= 0 {
		c.Interval = defaultPollInterval
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = max(c.Interval*6, time.Hour)
	}
	if c.Tick <= 0 {
		c.Tick = min(time.Second, c.Interval/4)
	}
	if c.Refresh <= 0 {
		c.Refresh = min(30*time.Second, c.Interval)
	}
}

// monitored is what the monitor keeps per machine between refreshes.
type monitored struct {
	m      machine.Machine
	offset time.Duration
	next   time.Time
}

// RunPowerMonitor polls every queryable machine's BMC, each at its own
// stable slot in the interval (machine.PollOffset), so that polls spread
// evenly and a restart does not bunch them. Polls are queries through the
// power queue, so the coordinator's worker limit caps concurrency, one BMC
// never serves two at once, and a slow or dead BMC occupies one worker for
// at most the query timeout while the others go on. A BMC that keeps
// failing is polled less often (machine.NextPoll), never forgotten. Only
// the region holding the "power-monitor" lease polls.
func (s *Service) RunPowerMonitor(ctx context.Context, cfg MonitorConfig) {
	cfg.defaults()
	s.defaultPoll.Store(int64(cfg.Interval))
	started := cfg
	watched := map[string]*monitored{}
	var refreshed time.Time
	t := time.NewTicker(cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.Now()
		if !s.leads(ctx, "power-monitor", cfg.Tick) {
			refreshed = time.Time{} // re-read everything when leadership comes back
			continue
		}
		if now.Sub(refreshed) >= cfg.Refresh {
			if iv := s.PollInterval(ctx); iv != cfg.Interval {
				// An operator changed the interval: every machine gets its
				// slot in the new one.
				s.Log.Info("power monitor interval", "from", cfg.Interval, "to", iv)
				cfg.Interval, cfg.MaxBackoff = iv, max(started.MaxBackoff, iv*6)
				clear(watched)
			}
			if err := s.refreshWatched(ctx, watched, cfg, now); err != nil {
				s.Log.Error("power monitor refresh", "err", err)
				continue
			}
			refreshed = now
		}
		for _, w := range watched {
			if now.Before(w.next) {
				continue
			}
			if _, _, err := s.Power.Submit(ctx, w.m, power.QueryAction, "", "power monitor"); noRack(err) {
				continue // no live rack polls it; its state stays as last read
			} else if err != nil {
				s.Log.Error("power monitor poll", "system_id", w.m.SystemID, "err", err)
			}
			w.next = machine.NextPoll(now, w.offset, cfg.Interval, w.m.Watch.Failures, cfg.MaxBackoff, mrand.Float64())
		}
	}
}

// refreshWatched brings the set of polled machines up to date: new
// machines get their slot, gone ones are dropped, and each machine's
// failure count (for back-off) is refreshed.
func (s *Service) refreshWatched(ctx context.Context, watched map[string]*monitored, cfg MonitorConfig, now time.Time) error {
	ms, err := s.Store.ListMachines(ctx, store.MachineFilter{WithPowerParams: true})
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if !s.Power.Drivers().Queryable(m.PowerType) {
			continue
		}
		seen[m.SystemID] = true
		if w, ok := watched[m.SystemID]; ok {
			w.m = m
			continue
		}
		off := machine.PollOffset(m.SystemID, cfg.Interval)
		watched[m.SystemID] = &monitored{m: m, offset: off, next: machine.NextPoll(now, off, cfg.Interval, 0, cfg.MaxBackoff, 0)}
	}
	for id := range watched {
		if !seen[id] {
			delete(watched, id)
		}
	}
	return nil
}
