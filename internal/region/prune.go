package region

import (
	"context"
	"time"

	"github.com/anvilmetal/anvil/internal/store"
)

// DefaultRetention keeps three months of events (enough to look back on
// a quarter's deployments), and discoveries for a week, at most 10,000:
// anonymous boot requests make them, so they must not grow without end.
var DefaultRetention = store.Retention{
	EventAge:       90 * 24 * time.Hour,
	DiscoveryAge:   7 * 24 * time.Hour,
	MaxDiscoveries: 10000,
	Batch:          10000,
}

// RunPruner deletes what retention no longer keeps, every interval, and
// again at once while a pass found a full batch of old events.
func (s *Service) RunPruner(ctx context.Context, r store.Retention, every time.Duration) {
	if r.Batch <= 0 {
		r.Batch = DefaultRetention.Batch
	}
	for {
		wait := every
		if !s.leads(ctx, "pruner", every) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		p, err := s.Store.Prune(ctx, r)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Log.Warn("pruning events and discoveries", "err", err)
		case p.Events >= int64(r.Batch):
			wait = time.Second // more to do; let other writers in between
		}
		if p.Events > 0 || p.Discoveries > 0 {
			s.Log.Info("pruned", "events", p.Events, "discoveries", p.Discoveries)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
