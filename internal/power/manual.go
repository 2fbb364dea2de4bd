package power

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Manual is MAAS's "manual" power type: Anvil cannot reach the BMC, so a
// person powers the machine; Anvil records what it asked for and cannot
// query the result.
type Manual struct{}

func (Manual) Name() string { return "manual" }

// Validate accepts no parameters: anything given would be silently ignored,
// which hides typos such as a power_type left at manual by mistake.
func (Manual) Validate(params map[string]string) error {
	if len(params) == 0 {
		return nil
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Errorf("power type manual takes no power parameters (got %s)", strings.Join(keys, ", "))
}

// BMC: a manual machine has no BMC; each is its own.
func (Manual) BMC(map[string]string) (BMC, error) { return BMC{Type: "manual"}, nil }

func (Manual) PowerOn(context.Context, map[string]string) error                   { return nil }
func (Manual) PowerOff(context.Context, map[string]string, bool) error            { return nil }
func (Manual) PowerCycle(context.Context, map[string]string) error                { return nil }
func (Manual) SetBootDevice(context.Context, map[string]string, BootDevice) error { return nil }

// CannotQuery keeps manual machines out of the power monitor.
func (Manual) CannotQuery() {}

func (Manual) Query(context.Context, map[string]string) (machine.PowerState, error) {
	return machine.PowerUnknown, ErrUnsupported
}
