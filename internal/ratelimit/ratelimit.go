// Package ratelimit keeps a token bucket per key (a source address), for
// the endpoints anyone may call: a flood from one address is refused
// before it reaches the store or burns CPU on password hashing.
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
	now   func() time.Time
	// maxKeys, when set, bounds the table: a new key that finds it full
	// of keys still in use is refused (see NewBounded).
	maxKeys int
	swept   time.Time // the last sweep of a bounded table

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New allows rate tokens per second per key, up to burst at once.
func New(rate float64, burst int) *PerKey {
	return &PerKey{rate: rate, burst: float64(burst), now: time.Now, buckets: map[string]*bucket{}}
}

// NewBounded is New keeping at most maxKeys keys: when that many are in
// use, a new key is refused until some refill, so a flood of forged
// sources costs bounded memory (for a caller that prefers refusing a
// stranger to remembering without end).
func NewBounded(rate float64, burst, maxKeys int) *PerKey {
	l := New(rate, burst)
	l.maxKeys = maxKeys
	return l
}

// Allow takes a token for addr, reporting whether there was one.
func (l *PerKey) Allow(addr string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[addr]
	if !ok {
		if len(l.buckets) >= l.sweepAt() {
			if l.maxKeys > 0 && now.Sub(l.swept) < 100*time.Millisecond {
				return false // full, and swept just now: no sweep per key
			}
			l.sweep(now)
			l.swept = now
			if l.maxKeys > 0 && len(l.buckets) >= l.maxKeys {
				return false
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

func (l *PerKey) sweepAt() int {
	if l.maxKeys > 0 {
		return l.maxKeys
	}
	return 100000
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

// Source is the key for a request: its peer's address without the port.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
