package region

import "sync"

// Hub wakes watchers when something was recorded. It carries no data:
// watchers re-read the store from the last event they saw, so a missed
// wake-up costs latency, never an event, and watchers in other region
// processes (which poll) see the same sequence.
type Hub struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewHub returns a hub with nobody waiting.
func NewHub() *Hub { return &Hub{ch: make(chan struct{})} }

// Changed returns a channel closed at the next Notify.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

// Notify wakes everyone waiting on Changed.
func (h *Hub) Notify() {
	h.mu.Lock()
	close(h.ch)
	h.ch = make(chan struct{})
	h.mu.Unlock()
}
