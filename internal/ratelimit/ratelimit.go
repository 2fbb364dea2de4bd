// Package ratelimit keeps a token bucket per key (a source address), for
// the endpoints anyone may call: a flood from one address is refused
// before it reaches the store or burns CPU on password hashing. Its
// Coalescer folds repeats of one thing into a count. Both keep bounded
// tables: keys are what a caller chooses.
package ratelimit

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// PerKey is a token bucket per key.
type PerKey struct {
	rate  float64 // tokens per second
	burst float64
	max   int // keys kept at most
	now   func() time.Time
	// refuse, when set, refuses a new key that finds the table full of
	// keys still in use, instead of forgetting old ones (see NewBounded).
	refuse bool
	swept  time.Time // the last sweep of a full table

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New allows rate tokens per second per key, up to burst at once.
func New(rate float64, burst int) *PerKey {
	return &PerKey{rate: rate, burst: float64(burst), max: 100000, now: time.Now, buckets: map[string]*bucket{}}
}

// WithMax keeps at most max keys (100,000 by default) and returns l.
func (l *PerKey) WithMax(max int) *PerKey {
	l.max = max
	return l
}

// NewBounded is New keeping at most maxKeys keys: when that many are in
// use, a new key is refused until some refill, so a flood of forged
// sources costs bounded memory and cannot reset the buckets of the keys
// it pushes out (for a caller that prefers refusing a stranger to
// forgetting a known one).
func NewBounded(rate float64, burst, maxKeys int) *PerKey {
	l := New(rate, burst).WithMax(maxKeys)
	l.refuse = true
	return l
}

// Allow takes a token for addr, reporting whether there was one.
func (l *PerKey) Allow(addr string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[addr]
	if !ok {
		if len(l.buckets) >= l.max {
			if l.refuse && now.Sub(l.swept) < 100*time.Millisecond {
				return false // full, and swept just now: no sweep per key
			}
			l.sweep(now)
			l.swept = now
			if len(l.buckets) >= l.max {
				if l.refuse {
					return false
				}
				l.evict()
			}
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[addr] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// sweep forgets buckets that have refilled: they hold nothing.
func (l *PerKey) sweep(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) > full {
			delete(l.buckets, k)
		}
	}
}

// evict forgets keys until there is room for one more when sweeping
// found none refilled: memory stays bounded, and a forgotten key (map
// order: any of them) starts again from a full bucket.
func (l *PerKey) evict() {
	for k := range l.buckets {
		if len(l.buckets) < l.max {
			return
		}
		delete(l.buckets, k)
	}
}

// Source is the key for a request: its peer's address without the port.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
