package rack

// The other racks' leases are kept with the boot cache, on disk too: a
// rack restarted while the region is away still confirms its partner's
// clients.

// PeerLeases returns the other racks' leases last received.
func (c *Cache) PeerLeases() []Lease {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]Lease(nil), c.leases...)
}

// OnPeerLeases registers fn to be called (outside the lock) with each new
// set of the other racks' leases, and at once with the current one.
func (c *Cache) OnPeerLeases(fn func([]Lease)) {
	c.mu.Lock()
	c.onLeases = fn
	cur := append([]Lease(nil), c.leases...)
	c.mu.Unlock()
	fn(cur)
}

func (c *Cache) setLeases(ls []Lease) {
	c.mu.Lock()
	c.leases, c.dirty = append([]Lease(nil), ls...), true
	fn, cur := c.onLeases, append([]Lease(nil), ls...)
	c.mu.Unlock()
	if fn != nil {
		fn(cur)
	}
}
