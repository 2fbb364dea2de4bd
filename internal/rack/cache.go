package rack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/anvilmetal/anvil/internal/dns"
)

// Cache is the rack's view of the machines, indexed for boot lookups.
type Cache struct {
	mu     sync.RWMutex
	byID   map[string]*Entry
	byMAC  map[string]*Entry
	byUUID map[string]*Entry
	// staged collects a snapshot being received after Reset, so that
	// lookups keep answering from the old view until it is complete.
	staged  map[string]*Entry
	path    string
	dirty   bool
	subnets []Subnet
	// onSubnets is told of a new DHCP configuration.
	onSubnets func([]Subnet)
	dns       *dns.Data
	onDNS     func(dns.Data)
	// leases are the other racks' DHCP leases on subnets this rack
	// shares with them; onLeases is told of new ones.
	leases   []Lease
	onLeases func([]Lease)
}

// OnDNS registers fn to be called (outside the lock) with each new DNS
// data, and at once with the current one if there is one.
func (c *Cache) OnDNS(fn func(dns.Data)) {
	c.mu.Lock()
	c.onDNS = fn
	cur := c.dns
	c.mu.Unlock()
	if cur != nil {
		fn(*cur)
	}
}

// Subnets returns the DHCP configuration last received.
func (c *Cache) Subnets() []Subnet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]Subnet(nil), c.subnets...)
}

// OnSubnets registers fn to be called (outside the lock) when the subnets
// change, and once at once with the current ones.
func (c *Cache) OnSubnets(fn func([]Subnet)) {
	c.mu.Lock()
	c.onSubnets = fn
	cur := append([]Subnet(nil), c.subnets...)
	c.mu.Unlock()
	fn(cur)
}

// NewCache returns an empty cache that persists to path ("" for memory
// only).
func NewCache(path string) *Cache {
	return &Cache{byID: map[string]*Entry{}, byMAC: map[string]*Entry{}, byUUID: map[string]*Entry{}, path: path}
}

// ByMAC finds a machine by any of its MACs (normalised lower-case colon
// form).
func (c *Cache) ByMAC(mac string) (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byMAC[strings.ToLower(mac)]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// ByUUID finds a machine by its SMBIOS UUID.
func (c *Cache) ByUUID(uuid string) (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byUUID[strings.ToLower(uuid)]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// Len is the number of machines known.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byID)
}

// Apply takes one change from the region.
func (c *Cache) Apply(ch Change) {
	if ch.Subnets != nil {
		c.mu.Lock()
		c.subnets, c.dirty = append([]Subnet(nil), (*ch.Subnets)...), true
		fn, cur := c.onSubnets, append([]Subnet(nil), c.subnets...)
		c.mu.Unlock()
		if fn != nil {
			fn(cur)
		}
		return
	}
	if ch.Leases != nil {
		c.setLeases(*ch.Leases)
		return
	}
	if ch.DNS != nil {
		c.mu.Lock()
		d := *ch.DNS
		c.dns, c.dirty = &d, true
		fn := c.onDNS
		c.mu.Unlock()
		if fn != nil {
			fn(d)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case ch.Reset:
		c.staged = map[string]*Entry{}
	case ch.Synced:
		if c.staged != nil {
			c.replaceLocked(c.staged)
			c.staged = nil
		}
	case ch.Upsert != nil:
		e := *ch.Upsert
		if c.staged != nil {
			c.staged[e.SystemID] = &e
			return
		}
		c.removeLocked(e.SystemID)
		c.addLocked(&e)
	case ch.Delete != "":
		if c.staged != nil {
			delete(c.staged, ch.Delete)
			return
		}
		c.removeLocked(ch.Delete)
	}
	c.dirty = true
}

func (c *Cache) replaceLocked(all map[string]*Entry) {
	c.byID, c.byMAC, c.byUUID = map[string]*Entry{}, map[string]*Entry{}, map[string]*Entry{}
	for _, e := range all {
		c.addLocked(e)
	}
}

func (c *Cache) addLocked(e *Entry) {
	c.byID[e.SystemID] = e
	for _, m := range e.MACs {
		c.byMAC[strings.ToLower(m)] = e
	}
	if e.UUID != "" {
		c.byUUID[strings.ToLower(e.UUID)] = e
	}
}

func (c *Cache) removeLocked(id string) {
	old, ok := c.byID[id]
	if !ok {
		return
	}
	delete(c.byID, id)
	for _, m := range old.MACs {
		if c.byMAC[strings.ToLower(m)] == old {
			delete(c.byMAC, strings.ToLower(m))
		}
	}
	if old.UUID != "" && c.byUUID[strings.ToLower(old.UUID)] == old {
		delete(c.byUUID, strings.ToLower(old.UUID))
	}
}

// snapshot is the cache's file format.
type snapshot struct {
	Entries []Entry   `json:"entries"`
	Subnets []Subnet  `json:"subnets"`
	DNS     *dns.Data `json:"dns,omitempty"`
	Leases  []Lease   `json:"leases,omitempty"`
}

// Save writes the cache to disk if it changed, atomically, so that a rack
// restarted while the region is down still knows its machines.
func (c *Cache) Save() error {
	c.mu.Lock()
	if c.path == "" || !c.dirty {
		c.mu.Unlock()
		return nil
	}
	snap := snapshot{Entries: make([]Entry, 0, len(c.byID)), Subnets: c.subnets, DNS: c.dns, Leases: c.leases}
	for _, e := range c.byID {
		snap.Entries = append(snap.Entries, *e)
	}
	c.dirty = false
	c.mu.Unlock()
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".cache-*")
	if err != nil {
		return fmt.Errorf("save boot cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("save boot cache: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save boot cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.path)
}

// Load reads what Save wrote; a missing file is an empty cache.
func (c *Cache) Load() error {
	if c.path == "" {
		return nil
	}
	b, err := os.ReadFile(c.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load boot cache: %w", err)
	}
	var snap snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return fmt.Errorf("load boot cache %s: %w", c.path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	all := map[string]*Entry{}
	for i := range snap.Entries {
		all[snap.Entries[i].SystemID] = &snap.Entries[i]
	}
	c.replaceLocked(all)
	c.subnets, c.dns, c.leases = snap.Subnets, snap.DNS, snap.Leases
	return nil
}
