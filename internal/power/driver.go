// Package power carries out power commands on machines' BMCs. The
// Coordinator is the only way in: every command for a machine, whoever asks,
// goes through its queue, so at most one is in flight per machine and per
// BMC, and equal requests are coalesced. Drivers (subpackages) speak to BMCs
// and decide nothing about the lifecycle.
package power

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/anvilmetal/anvil/internal/machine"
)

// BootDevice says what a machine boots from next.
type BootDevice struct {
	Device     string // "network" (PXE) or "disk"
	Persistent bool   // false: the next boot only
	EFI        bool   // UEFI rather than legacy BIOS boot
}

// Driver speaks one kind of BMC. Every method may block on the network and
// must honour ctx. Errors should be *Error so that callers can say in plain
// words what went wrong.
type Driver interface {
	// Name is the power_type it serves ("ipmi", "redfish", "manual").
	Name() string
	// Validate checks a machine's power parameters before they are stored.
	Validate(params map[string]string) error
	// BMC names the BMC the parameters point at, so that commands for
	// machines behind one BMC (a chassis, a Redfish manager) never
	// overlap. System tells machines behind the same BMC apart.
	BMC(params map[string]string) (BMC, error)
	// PowerOn turns the machine on; it must never cycle a machine that is
	// already on.
	PowerOn(ctx context.Context, params map[string]string) error
	// PowerOff turns it off: soft asks the OS to shut down (ACPI), hard
	// cuts power. Drivers without soft off return ErrUnsupported for it.
	PowerOff(ctx context.Context, params map[string]string, soft bool) error
	// PowerCycle restarts a machine that is on; the coordinator only asks
	// for it when a cycle was asked for.
	PowerCycle(ctx context.Context, params map[string]string) error
	// Query reads the power state. Drivers that cannot tell return
	// ErrUnsupported.
	Query(ctx context.Context, params map[string]string) (machine.PowerState, error)
	// SetBootDevice sets what the machine boots from next.
	SetBootDevice(ctx context.Context, params map[string]string, dev BootDevice) error
}

// BMC identifies a BMC and the system behind it that a machine is.
type BMC struct {
	Type    string // power type
	Address string // host:port as the driver dials it
	System  string // which system behind the BMC; "" when it fronts one
}

// Key is the BMC's identity without the system: commands sharing a Key are
// run one after another. It is empty for machines without a shared BMC
// (manual power), which are serialised per machine only.
func (b BMC) Key() string {
	if b.Address == "" {
		return ""
	}
	return b.Type + "://" + b.Address
}

// ErrUnsupported is returned by drivers for operations their BMC lacks.
var ErrUnsupported = errors.New("not supported by this power type")

// Kind classifies BMC failures for operators.
type Kind string

const (
	Unreachable Kind = "unreachable"    // no answer, connection refused, no route
	AuthRefused Kind = "auth refused"   // wrong user, password or privilege
	Timeout     Kind = "timeout"        // answered, but not in time / never reached the state
	Unsupported Kind = "unsupported"    // the BMC cannot do it
	BMCError    Kind = "bmc error"      // the BMC answered with an error
	BadParams   Kind = "bad parameters" // the power parameters cannot work
)

// Error is a classified BMC failure.
type Error struct {
	Kind Kind
	Op   string // "power on", "query"
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: BMC %s: %v", e.Op, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, ErrUnsupported) match an Unsupported *Error.
func (e *Error) Is(target error) bool { return target == ErrUnsupported && e.Kind == Unsupported }

// Classify returns the kind of a driver error; unclassified errors are
// BMCError.
func Classify(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Kind
	}
	if errors.Is(err, ErrUnsupported) {
		return Unsupported
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	return BMCError
}

// Registry maps power_type to driver.
type Registry map[string]Driver

// NewRegistry registers drivers by their names.
func NewRegistry(drivers ...Driver) Registry {
	r := Registry{}
	for _, d := range drivers {
		r[d.Name()] = d
	}
	return r
}

// Lookup finds the driver for a power type.
func (r Registry) Lookup(powerType string) (Driver, error) {
	d, ok := r[powerType]
	if !ok {
		return nil, fmt.Errorf("unknown power type %q (known: %v)", powerType, r.Names())
	}
	return d, nil
}

// Queryable reports whether machines of a power type can be polled:
// drivers that can never tell (manual) say so by implementing
// CannotQuery.
func (r Registry) Queryable(powerType string) bool {
	d, ok := r[powerType]
	if !ok {
		return false
	}
	_, no := d.(interface{ CannotQuery() })
	return !no
}

// Names lists the registered power types, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Inventorier is a driver whose BMC can name the system's SMBIOS UUID and
// NIC MACs out of band (Redfish can; IPMI cannot), so that a machine
// added by its BMC alone is known by its MACs before it ever boots.
type Inventorier interface {
	Inventory(ctx context.Context, params map[string]string) (uuid string, macs []string, err error)
}
