package ratelimit

import (
	"sync"
	"time"
)

// Coalescer folds the repeats of a key within a window of its first
// occurrence into that one, and counts them: a flood of one thing is
// kept once, with how often it came.
type Coalescer[V any] struct {
	window time.Duration
	max    int
	now    func() time.Time

	mu   sync.Mutex
	keys map[string]*held[V]
}

type held[V any] struct {
	first, last time.Time
	v           V
	n           int
}

// Repeat is a key's first value with the repeats its window folded.
type Repeat[V any] struct {
	Value V
	N     int       // repeats after the first
	Last  time.Time // when the last came
}

// NewCoalescer folds repeats within window, tracking at most max keys.
func NewCoalescer[V any](window time.Duration, max int) *Coalescer[V] {
	return &Coalescer[V]{window: window, max: max, now: time.Now, keys: map[string]*held[V]{}}
}

// First notes key with v and reports whether it is the first within its
// window (keep it) rather than a repeat (counted: drop it). A full table
// forgets its closed windows (with the counts Due has not taken); full
// of open ones, a new key is kept untracked.
func (c *Coalescer[V]) First(key string, v V) bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.keys[key]; ok && now.Sub(h.first) < c.window {
		h.n++
		h.last = now
		return false
	}
	if _, ok := c.keys[key]; !ok && len(c.keys) >= c.max {
		c.forgetClosed(now)
		if len(c.keys) >= c.max {
			return true
		}
	}
	c.keys[key] = &held[V]{first: now, last: now, v: v}
	return true
}

// Due returns the keys whose window has closed with repeats in it, and
// forgets every closed window.
func (c *Coalescer[V]) Due() []Repeat[V] {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Repeat[V]
	for k, h := range c.keys {
		if now.Sub(h.first) < c.window {
			continue
		}
		if h.n > 0 {
			out = append(out, Repeat[V]{Value: h.v, N: h.n, Last: h.last})
		}
		delete(c.keys, k)
	}
	return out
}

// forgetClosed drops the windows that have closed.
func (c *Coalescer[V]) forgetClosed(now time.Time) {
	for k, h := range c.keys {
		if now.Sub(h.first) >= c.window {
			delete(c.keys, k)
		}
	}
}
