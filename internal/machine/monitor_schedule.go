package machine

import (
	"hash/fnv"
	"math"
	"time"
)

// Scheduling for the power monitor's poller. Each machine has a slot in the
// polling interval, fixed by a hash of its system ID and counted from the
// Unix epoch, so that N machines spread evenly over the interval, and a
// restarted region (or another region taking over) polls every machine in
// the same slot as before instead of all at once.

// PollOffset returns systemID's slot in [0, interval): the same for the
// same ID and interval, on every region and after every restart. Zero when
// interval is not positive.
func PollOffset(systemID string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(systemID))
	return time.Duration(mix64(h.Sum64()) % uint64(interval))
}

// mix64 is SplitMix64's finaliser: FNV alone leaves short, similar IDs
// ("node-0001", "node-0002") clustered in the high bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// NextPoll returns when to poll a machine next, given when it was last
// polled (after a restart, or for a machine never polled, pass the current
// time: every machine then takes its own slot within one interval).
//
// A machine whose BMC answers (failures < 2) is polled at its next slot
// strictly after last, at most one interval later. A BMC that keeps failing
// is polled less often but never forgotten: failures = n waits
// interval × 2^(n-1), capped at maxBackoff (never less than interval), then
// shortened by up to a quarter according to jitter, a value in [0, 1) the
// caller draws (values outside are clamped), so that BMCs that failed
// together (a switch down) do not come back in step. The result is in
// (last + ¾·wait, last + wait]. Once a reading succeeds, failures is 0 and
// the machine is back in its slot. With a non-positive interval, or a zero
// last, NextPoll returns last (poll now).
func NextPoll(last time.Time, offset, interval time.Duration, failures int, maxBackoff time.Duration, jitter float64) time.Time {
	if interval <= 0 || last.IsZero() {
		return last
	}
	if failures < 2 {
		return nextSlot(last, offset, interval)
	}
	wait := pollBackoff(interval, failures, maxBackoff)
	switch {
	case math.IsNaN(jitter) || jitter < 0:
		jitter = 0
	case jitter >= 1:
		jitter = math.Nextafter(1, 0)
	}
	return last.Add(wait - time.Duration(jitter*float64(wait)/4))
}

// pollBackoff is interval × 2^(failures-1), capped at maxBackoff (and never
// below interval), without overflowing.
func pollBackoff(interval time.Duration, failures int, maxBackoff time.Duration) time.Duration {
	limit := max(maxBackoff, interval)
	wait := interval
	for i := 1; i < failures && wait < limit; i++ {
		if wait > limit/2 {
			return limit
		}
		wait *= 2
	}
	return min(wait, limit)
}

// nextSlot returns the first time strictly after last whose distance from
// the Unix epoch is offset modulo interval.
func nextSlot(last time.Time, offset, interval time.Duration) time.Time {
	offset %= interval
	if offset < 0 {
		offset += interval
	}
	n := last.UnixNano()
	r := time.Duration(n % int64(interval)) // the phase of last in its interval
	if r < 0 {
		r += interval
	}
	d := offset - r // from last to this interval's slot
	if d <= 0 {
		d += interval
	}
	return last.Add(d)
}
