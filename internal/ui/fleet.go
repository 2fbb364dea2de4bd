package ui

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
	"github.com/anvilmetal/anvil/internal/store"
)

// row is what the machine list shows of a machine, kept in memory so that
// filtering, sorting and paging 10,000 machines costs microseconds rather
// than a full read of the machines table per request.
type row struct {
	SystemID, Hostname string
	Status             machine.Status
	StatusMessage      string
	Power              machine.PowerState
	Drift              bool
	DriftReason        string
	PowerError         string // the BMC's last failure while it keeps failing
	Failures           int
	ReadAt             time.Time
	Owner, Zone, Pool  string
	PowerType          string
	CPU                int
	Memory             int64 // MiB
	Storage            float64
	Tags               []string
	MACs               []string
	// IPs are the addresses the machine's MACs were last seen with.
	IPs []string
	// OS is osystem/series while the machine is deploying or deployed.
	OS      string
	Version int64
	search  string // lower-case text the free-text filter matches
}

// rowOf is the row of m; ips maps MACs to the address each was last seen
// with.
func rowOf(m *machine.Machine, ips map[string]string) row {
	r := row{
		SystemID: m.SystemID, Hostname: m.Hostname, Status: m.Status, StatusMessage: m.StatusMessage,
		Power: m.PowerState, Drift: m.Watch.Drift, DriftReason: m.Watch.Reason,
		Failures: m.Watch.Failures, ReadAt: m.Watch.ReadAt,
		Owner: m.Owner, Zone: m.Zone, Pool: m.Pool, PowerType: m.PowerType,
		CPU: m.CPUCount, Memory: m.Memory, Storage: m.Storage,
		Tags: slices.Clone(m.Tags), Version: m.Version,
	}
	if m.Watch.Failures > 0 {
		r.PowerError = m.Watch.ReadError
	}
	if m.OSystem != "" {
		r.OS = m.OSystem + "/" + m.DistroSeries
	}
	for _, i := range m.Interfaces {
		r.MACs = append(r.MACs, i.MAC)
	}
	return r.withIPs(ips)
}

// ipsOf is the distinct addresses of macs, in their order.
func ipsOf(macs []string, ips map[string]string) []string {
	var out []string
	for _, mac := range macs {
		if ip := ips[mac]; ip != "" && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	return out
}

// withIPs is r with the addresses its MACs were last seen with, and the
// search text that goes with them.
func (r row) withIPs(ips map[string]string) row {
	r.IPs = ipsOf(r.MACs, ips)
	words := append([]string{r.Hostname, r.SystemID, r.Owner, r.OS}, r.MACs...)
	r.search = strings.ToLower(strings.Join(append(append(words, r.IPs...), r.Tags...), " "))
	return r
}

// looksLike reports whether two rows of a machine show the same: they
// differ at most in version and in when power was last read.
func (r *row) looksLike(o *row) bool {
	a, b := *r, *o
	a.Version, b.Version, a.ReadAt, b.ReadAt = 0, 0, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// fleet is the in-memory copy of every machine's row. It is brought up to
// date by reading only versions, then full rows of the machines whose
// version moved, at most once per minGap however many pages ask.
type fleet struct {
	store  store.Store
	minGap time.Duration
	// changed returns a channel closed at the next local change (the
	// region's hub); a closed one means the copy may be stale.
	changed func() <-chan struct{}
	wake    <-chan struct{}

	refreshMu sync.Mutex // one refresh at a time
	checked   time.Time
	// sighted is when the machines' addresses were last read: they
	// change without moving a machine's version, so they are read on
	// their own, at most once per sightGap.
	sighted  time.Time
	sightGap time.Duration

	mu   sync.RWMutex
	rows map[string]*row // never mutated: a change replaces the row
	ips  map[string]string
	gen  int64 // increases whenever a row changes, appears or goes
	// sorted caches, for the current generation, every row in the order
	// of one sort key (ascending), so that a page costs one pass over the
	// rows and no sort.
	sorted    map[string][]*row
	sortedGen int64
}

func newFleet(st store.Store, changed func() <-chan struct{}) *fleet {
	return &fleet{store: st, minGap: 300 * time.Millisecond, sightGap: 5 * time.Second, changed: changed, rows: map[string]*row{}}
}

// refresh reads what changed since the last refresh, unless one ran within
// minGap and nothing changed locally since (so that a page reloaded after
// an action shows it). It returns the generation after it.
func (f *fleet) refresh(ctx context.Context) (int64, error) {
	f.refreshMu.Lock()
	defer f.refreshMu.Unlock()
	if time.Since(f.checked) < f.minGap && !closed(f.wake) {
		return f.generation(), nil
	}
	f.wake = f.changed()
	vs, err := f.store.ListMachineVersions(ctx, store.MachineFilter{})
	if err != nil {
		return f.generation(), err
	}
	f.mu.RLock()
	var stale []string
	live := make(map[string]bool, len(vs))
	for _, v := range vs {
		live[v.SystemID] = true
		if r, ok := f.rows[v.SystemID]; !ok || r.Version != v.Version || r.Zone != v.Zone || r.Pool != v.Pool {
			stale = append(stale, v.SystemID)
		}
	}
	gone := 0
	for id := range f.rows {
		if !live[id] {
			gone++
		}
	}
	f.mu.RUnlock()

	var ips map[string]string
	if time.Since(f.sighted) >= f.sightGap {
		ss, err := f.store.MachineSightings(ctx, nil)
		if err != nil {
			return f.generation(), err
		}
		ips = make(map[string]string, len(ss))
		for _, d := range ss {
			ips[d.MAC] = d.IP
		}
		f.sighted = time.Now()
	}
	f.mu.RLock()
	use := f.ips
	f.mu.RUnlock()
	if ips != nil {
		use = ips
	}
	fresh := make([]*row, 0, len(stale))
	for chunk := range slices.Chunk(stale, 500) {
		ms, err := f.store.ListMachines(ctx, store.MachineFilter{SystemIDs: chunk})
		if err != nil {
			return f.generation(), err
		}
		for i := range ms {
			r := rowOf(&ms[i], use)
			fresh = append(fresh, &r)
		}
	}
	f.mu.Lock()
	shown := gone > 0
	if ips != nil {
		f.ips = ips
		for id, r := range f.rows {
			if !slices.Equal(ipsOf(r.MACs, ips), r.IPs) {
				n := r.withIPs(ips)
				f.rows[id], shown = &n, true
			}
		}
	}
	for _, r := range fresh {
		if old, ok := f.rows[r.SystemID]; !ok || !old.looksLike(r) {
			shown = true
		}
		f.rows[r.SystemID] = r
	}
	if gone > 0 {
		for id := range f.rows {
			if !live[id] {
				delete(f.rows, id)
			}
		}
	}
	// A power poll moves a machine's version every few minutes without
	// changing anything a page shows; such rows are kept up to date
	// without telling every open page to fetch again.
	if shown {
		f.gen++
	}
	gen := f.gen
	f.mu.Unlock()
	f.checked = time.Now()
	return gen, nil
}

func (f *fleet) generation() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.gen
}

// current returns every row as it is now, in no order. Unlike ordered's
// cached slices, it holds rows replaced without a new generation (a new
// power reading), so that what it counts of them is up to date.
func (f *fleet) current() []*row {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]*row, 0, len(f.rows))
	for _, r := range f.rows {
		out = append(out, r)
	}
	return out
}

// ordered returns every row in ascending order of the sort key (ties by
// hostname, then system ID). The slice is shared: callers must not change
// it or its rows. It is kept for a generation, so a row in it may be older
// than the fleet's in what looksLike ignores (the power reading's time).
func (f *fleet) ordered(key string) []*row {
	f.mu.RLock()
	if f.sortedGen == f.gen && f.sorted[key] != nil {
		out := f.sorted[key]
		f.mu.RUnlock()
		return out
	}
	f.mu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sortedGen != f.gen || f.sorted == nil {
		f.sorted, f.sortedGen = map[string][]*row{}, f.gen
	}
	if out := f.sorted[key]; out != nil {
		return out
	}
	out := make([]*row, 0, len(f.rows))
	for _, r := range f.rows {
		out = append(out, r)
	}
	by := sortKeys[key]
	slices.SortFunc(out, func(a, b *row) int {
		if c := by(a, b); c != 0 {
			return c
		}
		if c := naturalCompare(a.Hostname, b.Hostname); c != 0 {
			return c
		}
		return cmp.Compare(a.SystemID, b.SystemID)
	})
	f.sorted[key] = out
	return out
}

func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
