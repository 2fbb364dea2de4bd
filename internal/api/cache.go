package api

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"

	"github.com/anvilmetal/anvil/internal/machine"
)

// renderCache keeps each machine's rendered JSON, keyed by system_id and
// checked against the stored version, the zone and pool it was rendered
// with and the stamp of the site's network (see listNet). Listing
// thousands of machines then costs a copy per machine instead of a
// reflection walk, and a stale entry can never be served: any write to a
// machine's rows, interfaces, links or tags bumps its version in the
// store, which every region reads.
type renderCache struct {
	mu      sync.RWMutex
	entries map[string]cachedMachine
}

type cachedMachine struct {
	version int64
	net     uint64
	zone    zoneJSON
	pool    poolJSON
	json    []byte
}

func newRenderCache() *renderCache { return &renderCache{entries: map[string]cachedMachine{}} }

// lookup returns the cached JSON if it is current.
func (c *renderCache) lookup(id string, version int64, net uint64, zone zoneJSON, pool poolJSON) ([]byte, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	if !ok || e.version != version || e.net != net || e.zone != zone || e.pool != pool {
		return nil, false
	}
	return e.json, true
}

// render renders m for a list, its network model laid on by dress (when
// not nil), and remembers it under the network stamp net.
func (c *renderCache) render(m *machine.Machine, n names, net uint64, dress func(*machineJSON)) []byte {
	j := renderMachine(m, n, false)
	if dress != nil {
		dress(&j)
	}
	b, _ := json.Marshal(j)
	c.mu.Lock()
	c.entries[m.SystemID] = cachedMachine{version: m.Version, net: net, zone: j.Zone, pool: j.Pool, json: b}
	c.mu.Unlock()
	return b
}

// prune drops entries for machines no longer listed when a full,
// unfiltered list shows how many exist.
func (c *renderCache) prune(live map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.entries {
		if !live[id] {
			delete(c.entries, id)
		}
	}
}

// writeJSONArray writes already-encoded elements as one JSON array,
// streaming them rather than joining megabytes into one buffer first.
func writeJSONArray(w io.Writer, items [][]byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(it)
	}
	bw.WriteString("]\n")
	return bw.Flush()
}
