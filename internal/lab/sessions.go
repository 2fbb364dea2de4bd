package lab

import "sync"

// SessionMeter counts the sessions virtual BMCs hold, as the BMCs see them:
// a session counts from the moment a BMC allocates it (its answer to Open
// Session) until the BMC drops it (Close Session, or eviction of a session
// the client abandoned). It keeps the highest count seen for the whole
// fleet and for any one BMC, so that a run can show that a client never
// held more sessions than its limits allow. Safe for concurrent use; one
// meter may serve many BMCs.
type SessionMeter struct {
	mu        sync.Mutex
	open      map[string]map[uint32]bool // BMC → its open session ids
	now       int
	maxAll    int
	maxOneBMC int
	maxBMC    string
	total     int
}

// NewSessionMeter returns an empty meter.
func NewSessionMeter() *SessionMeter {
	return &SessionMeter{open: map[string]map[uint32]bool{}}
}

// Opened records that bmc allocated session id.
func (s *SessionMeter) Opened(bmc string, id uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.open[bmc]
	if ids == nil {
		ids = map[uint32]bool{}
		s.open[bmc] = ids
	}
	if ids[id] {
		return
	}
	ids[id] = true
	s.now++
	s.total++
	s.maxAll = max(s.maxAll, s.now)
	if len(ids) > s.maxOneBMC {
		s.maxOneBMC, s.maxBMC = len(ids), bmc
	}
}

// Closed records that bmc dropped session id; ids it never saw are ignored.
func (s *SessionMeter) Closed(bmc string, id uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.open[bmc]
	if !ids[id] {
		return
	}
	delete(ids, id)
	if len(ids) == 0 {
		delete(s.open, bmc)
	}
	s.now--
}

// SessionStats is what a meter saw.
type SessionStats struct {
	Open      int    // sessions open now, over all BMCs
	MaxAll    int    // most sessions open at once, over all BMCs
	MaxOneBMC int    // most sessions open at once on one BMC
	MaxBMC    string // a BMC that had MaxOneBMC open
	Total     int    // sessions opened
}

// Stats returns the counts so far.
func (s *SessionMeter) Stats() SessionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionStats{Open: s.now, MaxAll: s.maxAll, MaxOneBMC: s.maxOneBMC, MaxBMC: s.maxBMC, Total: s.total}
}

// Reset forgets the maxima and the total, keeping the sessions open now.
func (s *SessionMeter) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxAll, s.total, s.maxOneBMC, s.maxBMC = s.now, 0, 0, ""
	for bmc, ids := range s.open {
		if len(ids) > s.maxOneBMC {
			s.maxOneBMC, s.maxBMC = len(ids), bmc
		}
	}
}
