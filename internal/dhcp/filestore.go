package dhcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileStore is a LeaseStore kept in memory and backed by a JSON-lines
// append log, so leases survive restarts without a database. Every change
// to a bound or released lease is appended and fsynced before Put returns:
// a crash can lose nothing a client was told. Offers are kept in memory
// only; losing one merely makes its client DISCOVER again.
//
// The log is rewritten (compacted) at open and whenever it has grown to
// more than twice the live leases plus compactSlack lines.
type FileStore struct {
	mu    sync.Mutex
	t     leaseTable
	path  string
	f     *os.File
	size  int64 // bytes of whole records in f, to undo a torn append
	lines int   // records in f
	now   func() time.Time
}

const (
	compactSlack = 1000
	// keepExpired is how long an expired or released lease is remembered
	// so its client gets the same address back; older ones are dropped at
	// compaction so the log does not grow with every MAC ever seen.
	keepExpired = 7 * 24 * time.Hour
)

// logRecord is one line of the log.
type logRecord struct {
	Op       string     `json:"op"` // "put" or "del"
	MAC      string     `json:"mac"`
	IP       string     `json:"ip,omitempty"`
	Subnet   string     `json:"subnet,omitempty"`
	Hostname string     `json:"hostname,omitempty"`
	State    LeaseState `json:"state,omitempty"`
	Expires  time.Time  `json:"expires,omitzero"`
	Updated  time.Time  `json:"updated,omitzero"`
}

// OpenFileStore loads (or creates) the lease log at path.
func OpenFileStore(path string) (*FileStore, error) {
	s := &FileStore{t: newLeaseTable(), path: path, now: time.Now}
	if err := s.load(); err != nil {
		return nil, err
	}
	if err := s.compact(); err != nil {
		return nil, err
	}
	return s, nil
}

// load replays the log. Lines that do not parse are skipped: only the last
// one can be torn by a crash, and compaction right after drops it.
func (s *FileStore) load() error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r logRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		mac, err := net.ParseMAC(r.MAC)
		if err != nil {
			continue
		}
		switch r.Op {
		case "del":
			s.t.del(mac.String())
		case "put":
			if l, ok := r.lease(mac); ok {
				s.t.put(l)
			}
		}
	}
	return sc.Err()
}

func (r logRecord) lease(mac net.HardwareAddr) (Lease, bool) {
	ip, err := netip.ParseAddr(r.IP)
	if err != nil {
		return Lease{}, false
	}
	sn, _ := netip.ParsePrefix(r.Subnet)
	return Lease{MAC: mac, IP: ip, Subnet: sn, Hostname: r.Hostname,
		State: r.State, Expires: r.Expires, Updated: r.Updated}, true
}

func putRecord(l Lease) logRecord {
	r := logRecord{Op: "put", MAC: l.MAC.String(), IP: l.IP.String(), Hostname: l.Hostname,
		State: l.State, Expires: l.Expires.UTC(), Updated: l.Updated.UTC()}
	if l.Subnet.IsValid() {
		r.Subnet = l.Subnet.String()
	}
	return r
}

// compact writes the live, durable leases to a new file and renames it
// over the log, so a crash mid-way leaves either the old or the new log.
func (s *FileStore) compact() error {
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	lines := 0
	cutoff := s.now().Add(-keepExpired)
	for _, l := range s.t.list() {
		if l.Expires.Before(cutoff) {
			s.t.del(l.MAC.String())
			continue
		}
		if l.State == StateOffered {
			continue
		}
		b, _ := json.Marshal(putRecord(l))
		w.Write(append(b, '\n'))
		lines++
	}
	err = errors.Join(w.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("dhcp: compacting %s: %w", s.path, err)
	}
	syncDir(filepath.Dir(s.path))
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.f, err = os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := s.f.Stat()
	if err != nil {
		return err
	}
	s.size, s.lines = st.Size(), lines
	return nil
}

// syncDir makes a rename durable; failure only weakens crash safety.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// appendRecord writes and fsyncs one record, undoing a partial write so
// the next append does not glue onto a torn line.
func (s *FileStore) appendRecord(r logRecord) error {
	if s.f == nil {
		return errors.New("dhcp: lease store closed")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	n, err := s.f.Write(b)
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		if n > 0 {
			s.f.Truncate(s.size)
		}
		return fmt.Errorf("dhcp: writing lease log: %w", err)
	}
	s.size += int64(n)
	s.lines++
	return nil
}

// maybeCompact runs after a change is both logged and applied, so the
// rewritten log includes it. A failed compaction loses nothing (the old
// log is intact and already holds the change) and is retried next time.
func (s *FileStore) maybeCompact() {
	if s.lines > 2*len(s.t.byMAC)+compactSlack {
		s.compact()
	}
}

func (s *FileStore) Get(_ context.Context, mac net.HardwareAddr) (Lease, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.t.byMAC[mac.String()]
	return l, ok, nil
}

func (s *FileStore) FindByIP(_ context.Context, ip netip.Addr) (Lease, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.t.findByIP(ip)
	return l, ok, nil
}

func (s *FileStore) Put(_ context.Context, l Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.t.check(l); err != nil {
		return err
	}
	if l.State != StateOffered {
		if err := s.appendRecord(putRecord(l)); err != nil {
			return err
		}
	}
	s.t.put(l)
	s.maybeCompact()
	return nil
}

func (s *FileStore) Delete(_ context.Context, mac net.HardwareAddr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.t.byMAC[mac.String()]
	if !ok {
		return nil
	}
	if l.State != StateOffered {
		if err := s.appendRecord(logRecord{Op: "del", MAC: mac.String()}); err != nil {
			return err
		}
	}
	s.t.del(mac.String())
	s.maybeCompact()
	return nil
}

func (s *FileStore) List(_ context.Context) ([]Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.list(), nil
}

// Close closes the log; the store must not be used afterwards.
func (s *FileStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
