package lab

import (
	"fmt"
	"sync"
)

// SimMachine is a simulated machine: power and boot device in memory.
type SimMachine struct {
	id, uuid string
	macs     []string

	mu         sync.Mutex
	on         bool
	device     string
	persistent bool
	efi        bool
	// Changes counts power transitions, so tests can see a cycle or an
	// unwanted reboot.
	changes []string
}

// NewSim returns a machine that is off and boots from disk.
func NewSim(id, uuid string, macs ...string) *SimMachine {
	return &SimMachine{id: id, uuid: uuid, macs: macs, device: "disk", persistent: true}
}

func (m *SimMachine) ID() string     { return m.id }
func (m *SimMachine) UUID() string   { return m.uuid }
func (m *SimMachine) MACs() []string { return append([]string(nil), m.macs...) }

func (m *SimMachine) PowerOn() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		m.on = true
		m.changes = append(m.changes, "on")
		m.bootedLocked()
	}
	return nil
}

func (m *SimMachine) PowerOff(soft bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.on {
		m.on = false
		m.changes = append(m.changes, "off")
	}
	return nil
}

// PowerCycle restarts a machine that is on; IPMI and Redfish both power on
// a machine that was off when asked to cycle or reset it.
func (m *SimMachine) PowerCycle() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on = true
	m.changes = append(m.changes, "cycle")
	m.bootedLocked()
	return nil
}

func (m *SimMachine) IsOn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on
}

func (m *SimMachine) SetBootDevice(device string, persistent, efi bool) error {
	if device != "network" && device != "disk" {
		return fmt.Errorf("unknown boot device %q", device)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.device, m.persistent, m.efi = device, persistent, efi
	return nil
}

func (m *SimMachine) BootDevice() (string, bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.device, m.persistent, m.efi
}

// bootedLocked forgets a boot-once device after a boot, as firmware does.
func (m *SimMachine) bootedLocked() {
	if !m.persistent {
		m.device, m.persistent = "disk", true
	}
}

// Changes returns the power transitions so far ("on", "off", "cycle").
func (m *SimMachine) Changes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.changes...)
}

// Fail simulates power loss behind Anvil's back.
func (m *SimMachine) Fail() {
	m.mu.Lock()
	m.on = false
	m.changes = append(m.changes, "lost")
	m.mu.Unlock()
}
