package machine

import (
	"time"

	"github.com/anvilmetal/anvil/internal/storage"
)

// PowerState is what Anvil last observed of a machine's power.
type PowerState string

const (
	PowerOn      PowerState = "on"
	PowerOff     PowerState = "off"
	PowerUnknown PowerState = "unknown"
	PowerError   PowerState = "error"
)

// Machine is one physical server as Anvil knows it.
type Machine struct {
	SystemID      string
	Hostname      string
	Domain        string
	Architecture  string // MAAS form: "amd64/generic"
	Description   string
	Status        Status
	StatusMessage string // the latest thing that happened, in words
	// PreviousStatus is where the machine was before the current phase or
	// before it was marked broken; abort, mark_fixed and the end of testing
	// or rescue return there.
	PreviousStatus Status
	// StatusExpires is when the current monitored status times out; zero
	// when the status is not monitored.
	StatusExpires time.Time
	Owner         string // username; empty when the machine is free
	Zone          string
	Pool          string
	PowerType     string
	// PowerParams holds the driver's parameters, secrets included. Stores
	// encrypt them at rest; the API hides secret ones from non-admins.
	PowerParams map[string]string
	// EraseMode is how the current release wipes the disks.
	EraseMode EraseMode
	// DriftPolicy is the machine's own power drift policy; empty inherits
	// its pool's.
	DriftPolicy DriftPolicy
	// Watch is the power monitor's memory of this machine.
	Watch        PowerWatch
	PowerState   PowerState
	Interfaces   []Interface
	CPUCount     int
	Memory       int64   // MiB
	Storage      float64 // MB, as MAAS reports it
	HardwareUUID string
	OSystem      string
	DistroSeries string
	// Netboot says the machine network-boots Anvil's environment; a
	// deploying machine turns it off once its image is on disk.
	Netboot bool
	// EphemeralDeploy says the deployment runs from memory (MAAS 3.5's
	// ephemeral_deploy): nothing is written to the disks, and every boot
	// of the deployed machine network-boots the same deployment again.
	EphemeralDeploy bool
	// UserData is the cloud-init user data of the current deployment.
	UserData []byte
	Tags     []string
	// Locked refuses every change a person asks for (MAAS's lock) until
	// the machine is unlocked; Anvil's own steps still run.
	Locked bool
	// OwnerData is the owner's key=value workload annotations (MAAS's
	// owner_data); they go when the machine is free again.
	OwnerData map[string]string
	// BMCIdentity is "type|host|port|system" of the BMC and the system
	// behind it, derived from the power parameters by the region; empty
	// for manual power. No two machines share one.
	BMCIdentity string
	// EnrolSecret is the one-time secret a netbooting phase puts on the
	// machine's own boot configuration; the environment exchanges it for
	// the machine's token. Empty outside those phases.
	EnrolSecret string
	// RescueFrom is the address rescue mode was last asked from; the
	// rescue environment keeps SSH connections for it.
	RescueFrom string
	// WrongBoots counts boots in a row into an environment other than the
	// one the status wants: the loop guard.
	WrongBoots int
	// Inventory is what commissioning found; nil before.
	Inventory *Inventory
	// Scripts summarises the newest script sets' results.
	Scripts ScriptSummary
	// StorageConfig is the machine's storage configuration (the layout
	// applied after commissioning, or one edited through the API); nil
	// before commissioning, or when the layout did not fit.
	StorageConfig *storage.Config
	Created       time.Time
	Updated       time.Time
	// Version increases with every stored change; stores use it to refuse
	// an update built on a stale read.
	Version int64
}

// Interface is a network interface of a machine.
type Interface struct {
	ID   int64
	Name string
	MAC  string // normalised: lower-case, colon-separated
	// Boot marks the interface the machine PXE boots from.
	Boot bool
}

// FQDN is hostname.domain, as MAAS shows it.
func (m *Machine) FQDN() string {
	if m.Domain == "" {
		return m.Hostname
	}
	return m.Hostname + "." + m.Domain
}

// BootInterface returns the interface marked for boot, else the first one.
func (m *Machine) BootInterface() (Interface, bool) {
	for _, i := range m.Interfaces {
		if i.Boot {
			return i, true
		}
	}
	if len(m.Interfaces) > 0 {
		return m.Interfaces[0], true
	}
	return Interface{}, false
}

// Clone returns a deep copy, so that a Step never aliases its input.
func (m Machine) Clone() Machine {
	c := m
	c.Interfaces = append([]Interface(nil), m.Interfaces...)
	c.Tags = append([]string(nil), m.Tags...)
	c.UserData = append([]byte(nil), m.UserData...)
	c.Watch = m.Watch.clone()
	if m.Inventory != nil {
		inv := m.Inventory.Clone()
		c.Inventory = &inv
	}
	if m.StorageConfig != nil {
		sc := m.StorageConfig.Clone()
		c.StorageConfig = &sc
	}
	c.PowerParams = cloneMap(m.PowerParams)
	c.OwnerData = cloneMap(m.OwnerData)
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
