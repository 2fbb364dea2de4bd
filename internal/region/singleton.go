package region

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// The region's singleton work (the status monitor, the pruner, the power
// monitor's schedule) runs in one region at a time, the one holding the
// work's lease in the shared database. The holder renews it every round;
// when that region dies the lease runs out and another region's next
// round takes it over, so the work goes on with no region in charge of
// deciding who is.

// leaseHolder names this region process in the leases it holds.
var leaseHolder = sync.OnceValue(func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "region-" + hex.EncodeToString(b[:])
})

// leaseTTL is how long a round's lease lasts: three rounds and a margin,
// so one slow round does not hand the work over, and a dead region's is
// taken over within that.
func leaseTTL(every time.Duration) time.Duration { return 3*every + 5*time.Second }

// leads takes or renews the named lease for a round of work done every
// interval; false when another region holds it (or the database cannot
// say, which is logged).
func (s *Service) leads(ctx context.Context, name string, every time.Duration) bool {
	now := s.Now()
	ok, err := s.Store.AcquireLease(ctx, name, s.holder(), now, now.Add(leaseTTL(every)))
	if err != nil && ctx.Err() == nil {
		s.Log.Error("singleton lease", "lease", name, "err", err)
	}
	return err == nil && ok
}

func (s *Service) holder() string {
	if s.LeaseHolder != "" {
		return s.LeaseHolder
	}
	return leaseHolder()
}
