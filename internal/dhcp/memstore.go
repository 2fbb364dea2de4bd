package dhcp

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// leaseTable is the index both stores share: one lease per MAC, one MAC
// per address. It is not locked; its owners are.
type leaseTable struct {
	byMAC map[string]Lease
	byIP  map[netip.Addr]string
}

func newLeaseTable() leaseTable {
	return leaseTable{byMAC: map[string]Lease{}, byIP: map[netip.Addr]string{}}
}

// check returns ErrAddressInUse if l may not be stored.
func (t *leaseTable) check(l Lease) error {
	mac := l.MAC.String()
	if owner, ok := t.byIP[l.IP]; ok && owner != mac && t.byMAC[owner].Active(l.Updated) {
		return ErrAddressInUse
	}
	return nil
}

// put stores l, evicting the stale holder of its address and the MAC's
// previous address. Callers run check first; replaying a log calls put
// alone, which reproduces the same table.
func (t *leaseTable) put(l Lease) {
	mac := l.MAC.String()
	if owner, ok := t.byIP[l.IP]; ok && owner != mac {
		delete(t.byMAC, owner)
	}
	if old, ok := t.byMAC[mac]; ok && t.byIP[old.IP] == mac {
		delete(t.byIP, old.IP)
	}
	l.MAC = append(net.HardwareAddr(nil), l.MAC...)
	t.byMAC[mac] = l
	t.byIP[l.IP] = mac
}

func (t *leaseTable) del(mac string) {
	if old, ok := t.byMAC[mac]; ok {
		if t.byIP[old.IP] == mac {
			delete(t.byIP, old.IP)
		}
		delete(t.byMAC, mac)
	}
}

func (t *leaseTable) findByIP(ip netip.Addr) (Lease, bool) {
	mac, ok := t.byIP[ip]
	if !ok {
		return Lease{}, false
	}
	return t.byMAC[mac], true
}

func (t *leaseTable) list() []Lease {
	out := make([]Lease, 0, len(t.byMAC))
	for _, l := range t.byMAC {
		out = append(out, l)
	}
	sortByIP(out)
	return out
}

func sortByIP(ls []Lease) { slices.SortFunc(ls, func(a, b Lease) int { return a.IP.Compare(b.IP) }) }

// MemStore is a LeaseStore in memory, for tests and throwaway servers.
type MemStore struct {
	mu sync.Mutex
	t  leaseTable
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{t: newLeaseTable()} }

func (s *MemStore) Get(_ context.Context, mac net.HardwareAddr) (Lease, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.t.byMAC[mac.String()]
	return l, ok, nil
}

func (s *MemStore) FindByIP(_ context.Context, ip netip.Addr) (Lease, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.t.findByIP(ip)
	return l, ok, nil
}

func (s *MemStore) Put(_ context.Context, l Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.t.check(l); err != nil {
		return err
	}
	s.t.put(l)
	return nil
}

func (s *MemStore) Delete(_ context.Context, mac net.HardwareAddr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t.del(mac.String())
	return nil
}

func (s *MemStore) List(_ context.Context) ([]Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.list(), nil
}
