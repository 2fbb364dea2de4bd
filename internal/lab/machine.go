// Package lab runs virtual machines behind virtual BMCs, for tests, demos
// and scale runs: an IPMI 2.0 BMC per machine and a Redfish service that
// can front one system or many. A machine is either simulated (a few
// fields in memory, with faults to inject) or a real QEMU process.
package lab

import (
	"sync"
	"time"
)

// Machine is what a virtual BMC controls. Implementations are safe for
// concurrent use.
type Machine interface {
	// ID names the machine (its Redfish system id, its log name).
	ID() string
	// UUID is its SMBIOS system UUID.
	UUID() string
	// MACs are its NICs' addresses.
	MACs() []string
	PowerOn() error
	PowerOff(soft bool) error
	PowerCycle() error
	IsOn() bool
	// SetBootDevice sets the next boot: device "network" or "disk".
	SetBootDevice(device string, persistent, efi bool) error
	BootDevice() (device string, persistent, efi bool)
}

// Faults are injected into a BMC's answers, to show that Anvil copes.
type Faults struct {
	Delay    time.Duration // added before every answer
	LossRate float64       // share of requests silently dropped, 0..1
	Hang     bool          // never answer
	// WrongPassword makes the BMC refuse the configured password, as if
	// someone changed it on the box.
	WrongPassword bool
}

// Log records each command a BMC carried out, with when it started and
// ended, so tests can prove that no two overlapped.
type Log struct {
	// Hook, if set, sees every entry as it is recorded (benchmarks time
	// commands with it).
	Hook func(LogEntry)
	// Discard drops entries after the hook, for long runs.
	Discard bool

	mu      sync.Mutex
	entries []LogEntry
}

// LogEntry is one command served.
type LogEntry struct {
	Machine string
	Command string
	Start   time.Time
	End     time.Time
}

// Record adds an entry.
func (l *Log) Record(e LogEntry) {
	if l.Hook != nil {
		l.Hook(e)
	}
	if l.Discard {
		return
	}
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

// Entries returns a copy of what was recorded.
func (l *Log) Entries() []LogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LogEntry(nil), l.entries...)
}
