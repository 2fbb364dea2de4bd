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

// Allow takes a token for addr, reporting whether there was one.
func (l *PerKey) Allow(addr string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[addr]
	if !ok {
		if len(l.buckets) >= 100000 {
			l.sweep(now)
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

// Source is the key for a request: its peer's address without the port.
func Source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
