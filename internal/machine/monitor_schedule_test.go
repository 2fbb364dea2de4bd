package machine

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// maasLikeIDs returns n distinct six-letter IDs in MAAS's alphabet, from a
// fixed linear congruential sequence (no randomness: the test is the same
// on every run).
func maasLikeIDs(n int) []string {
	const alphabet = "abcdefghkmnpqrstwxy345678"
	ids := make([]string, 0, n)
	seen := map[string]bool{}
	x := uint64(12345)
	for len(ids) < n {
		x = x*6364136223846793005 + 1442695040888963407
		b := make([]byte, 6)
		v := x >> 16
		for i := range b {
			b[i] = alphabet[v%uint64(len(alphabet))]
			v /= uint64(len(alphabet))
		}
		if id := string(b); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func sequentialIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("node-%05d", i+1)
	}
	return ids
}

func TestPollOffsetRangeAndStability(t *testing.T) {
	for _, interval := range []time.Duration{time.Nanosecond, time.Second, 30 * time.Second, 5 * time.Minute, 24 * time.Hour} {
		for _, id := range append(maasLikeIDs(100), "", "x7ykqe") {
			o := PollOffset(id, interval)
			if o < 0 || o >= interval {
				t.Fatalf("PollOffset(%q, %s) = %s, out of range", id, interval, o)
			}
			if again := PollOffset(id, interval); again != o {
				t.Fatalf("PollOffset(%q, %s) not stable: %s then %s", id, interval, o, again)
			}
		}
	}
	for _, interval := range []time.Duration{0, -time.Second} {
		if o := PollOffset("x7ykqe", interval); o != 0 {
			t.Errorf("PollOffset with interval %s = %s", interval, o)
		}
	}
	// Regions of different versions must agree on slots, so the hash is
	// pinned: change it only on purpose.
	if got, want := PollOffset("x7ykqe", 5*time.Minute), time.Duration(163704229074); got != want {
		t.Errorf("PollOffset(x7ykqe, 5m) = %d, want %d", got, want)
	}
}

// TestPollOffsetSpread checks that 10,000 machines spread evenly over a
// 5-minute interval: no 10-second bucket holds more than 1.5× its share or
// less than half of it, and no 1-second bucket more than twice its share.
func TestPollOffsetSpread(t *testing.T) {
	const interval = 5 * time.Minute
	for name, ids := range map[string][]string{"maas-like": maasLikeIDs(10000), "sequential": sequentialIDs(10000)} {
		t.Run(name, func(t *testing.T) {
			for _, bucket := range []struct {
				width    time.Duration
				max, min float64 // as multiples of the mean
			}{{10 * time.Second, 1.5, 0.5}, {time.Second, 2, 0}} {
				n := int(interval / bucket.width)
				counts := make([]int, n)
				for _, id := range ids {
					counts[PollOffset(id, interval)/bucket.width]++
				}
				mean := float64(len(ids)) / float64(n)
				lo, hi := counts[0], counts[0]
				for _, c := range counts {
					lo, hi = min(lo, c), max(hi, c)
				}
				if float64(hi) > bucket.max*mean || float64(lo) < bucket.min*mean {
					t.Errorf("%s buckets: min %d max %d, mean %.1f", bucket.width, lo, hi, mean)
				}
			}
		})
	}
}

func TestNextPollCadence(t *testing.T) {
	const interval = time.Minute
	epoch := time.Unix(0, 0)
	for _, id := range maasLikeIDs(50) {
		offset := PollOffset(id, interval)
		last := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
		for i := range 5 {
			next := NextPoll(last, offset, interval, 0, time.Hour, 0.5)
			if !next.After(last) || next.Sub(last) > interval {
				t.Fatalf("%s: next %v not in (last, last+interval] for last %v", id, next, last)
			}
			if phase := next.Sub(epoch) % interval; phase != offset {
				t.Fatalf("%s: next %v is at phase %s, want its slot %s", id, next, phase, offset)
			}
			if i > 0 && next.Sub(last) != interval {
				t.Fatalf("%s: from a slot, the next poll is %s later", id, next.Sub(last))
			}
			last = next
		}
	}
	// Exactly on the slot: the next one, not the same.
	slot := time.Unix(600, 0).Add(7 * time.Second)
	if got := NextPoll(slot, 7*time.Second, interval, 0, 0, 0); !got.Equal(slot.Add(interval)) {
		t.Errorf("from the slot itself: %v", got)
	}
	// A single failure keeps the cadence.
	if a, b := NextPoll(slot, 7*time.Second, interval, 0, time.Hour, 0), NextPoll(slot, 7*time.Second, interval, 1, time.Hour, 0.9); !a.Equal(b) {
		t.Errorf("one failure moved the poll: %v vs %v", a, b)
	}
	// Offsets out of range are reduced; times before the epoch work.
	before := time.Unix(-1000, 0)
	if got := NextPoll(before, 61*time.Second, interval, 0, 0, 0); got.Sub(epoch)%interval != time.Second && got.Sub(epoch)%interval != time.Second-interval {
		t.Errorf("before the epoch: %v", got)
	}
	if got := NextPoll(time.Time{}, 0, interval, 0, 0, 0); !got.IsZero() {
		t.Errorf("zero last: %v", got)
	}
	if got := NextPoll(slot, 0, 0, 3, 0, 0); !got.Equal(slot) {
		t.Errorf("zero interval: %v", got)
	}
}

// TestNextPollAfterRestart: a region that restarts and schedules every
// machine from the restart time polls each within one interval, spread as
// evenly as the offsets.
func TestNextPollAfterRestart(t *testing.T) {
	const interval = 5 * time.Minute
	restart := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	counts := make([]int, 30)
	for _, id := range maasLikeIDs(10000) {
		next := NextPoll(restart, PollOffset(id, interval), interval, 0, time.Hour, 0)
		d := next.Sub(restart)
		if d <= 0 || d > interval {
			t.Fatalf("%s: first poll %s after the restart", id, d)
		}
		counts[(d-1)/(10*time.Second)]++
	}
	for i, c := range counts {
		if c > 2*10000/30 {
			t.Errorf("bucket %d holds %d of 10000", i, c)
		}
	}
}

func TestNextPollBackoff(t *testing.T) {
	const interval = time.Minute
	last := time.Date(2025, 3, 4, 5, 6, 0, 0, time.UTC)
	cases := []struct {
		failures   int
		maxBackoff time.Duration
		wait       time.Duration
	}{
		{2, 30 * time.Minute, 2 * time.Minute},
		{3, 30 * time.Minute, 4 * time.Minute},
		{4, 30 * time.Minute, 8 * time.Minute},
		{5, 30 * time.Minute, 16 * time.Minute},
		{6, 30 * time.Minute, 30 * time.Minute}, // 32 capped
		{7, 30 * time.Minute, 30 * time.Minute},
		{64, 30 * time.Minute, 30 * time.Minute},
		{1000, 30 * time.Minute, 30 * time.Minute}, // no overflow
		{math.MaxInt, 30 * time.Minute, 30 * time.Minute},
		{5, 0, interval},                           // no back-off allowed: the interval
		{5, 10 * time.Second, interval},            // a cap below the interval is the interval
		{20, math.MaxInt64, 1 << 19 * time.Minute}, // far, but finite
	}
	for _, c := range cases {
		got := NextPoll(last, 0, interval, c.failures, c.maxBackoff, 0).Sub(last)
		if got != c.wait {
			t.Errorf("failures %d, cap %s: wait %s, want %s", c.failures, c.maxBackoff, got, c.wait)
		}
	}
	// The wait never shrinks as failures grow.
	prev := time.Duration(0)
	for f := 0; f < 100; f++ {
		got := NextPoll(last, 0, interval, f, 6*time.Hour, 0).Sub(last)
		if got < prev || got > 6*time.Hour {
			t.Fatalf("failures %d: wait %s after %s", f, got, prev)
		}
		prev = got
	}
}

func TestNextPollJitterBounds(t *testing.T) {
	const interval = time.Minute
	last := time.Date(2025, 3, 4, 5, 6, 0, 0, time.UTC)
	for _, failures := range []int{2, 4, 10} {
		wait := NextPoll(last, 0, interval, failures, time.Hour, 0).Sub(last)
		prev := wait + 1
		for _, j := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.999999, math.Nextafter(1, 0)} {
			got := NextPoll(last, 0, interval, failures, time.Hour, j).Sub(last)
			if got <= wait*3/4 || got > wait {
				t.Errorf("failures %d jitter %v: %s not in (%s, %s]", failures, j, got, wait*3/4, wait)
			}
			if got >= prev {
				t.Errorf("failures %d: jitter %v does not shorten the wait further (%s after %s)", failures, j, got, prev)
			}
			prev = got
		}
		// Out of range jitter is clamped.
		for j, want := range map[float64]time.Duration{
			-1:         wait,
			math.NaN(): wait,
			1:          NextPoll(last, 0, interval, failures, time.Hour, math.Nextafter(1, 0)).Sub(last),
			7:          NextPoll(last, 0, interval, failures, time.Hour, math.Nextafter(1, 0)).Sub(last),
		} {
			if got := NextPoll(last, 0, interval, failures, time.Hour, j).Sub(last); got != want {
				t.Errorf("failures %d jitter %v: %s, want %s", failures, j, got, want)
			}
		}
	}
}
