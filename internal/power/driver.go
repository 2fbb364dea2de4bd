// Package power carries out power commands on machines' BMCs. The
// Coordinator is the only way in: every command for a machine, whoever asks,
// goes through its queue, so at most one is in flight per machine and equal
// requests are coalesced. Drivers speak to BMCs and decide nothing.
package power

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Driver speaks one kind of BMC.
type Driver interface {
	// Name is the power_type it serves ("ipmi", "manual").
	Name() string
	// Validate checks a machine's power parameters before they are stored.
	Validate(params map[string]string) error
	// Act carries out on, off or cycle.
	Act(ctx context.Context, params map[string]string, action machine.PowerAction) error
	// Query reads the power state. Drivers that cannot tell return
	// ErrUnsupported.
	Query(ctx context.Context, params map[string]string) (machine.PowerState, error)
}

// ErrUnsupported is returned by drivers for operations their BMC lacks.
var ErrUnsupported = errors.New("not supported by this power type")

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

// Names lists the registered power types, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
