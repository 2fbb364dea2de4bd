package power

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Backoff is the wait between verification queries, as MAAS's drivers do;
// the last value repeats.
var Backoff = []time.Duration{time.Second, 2 * time.Second, 2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 12 * time.Second}

// Carry performs one power action and verifies it: after acting, it queries
// with back-off until the BMC reports the wanted state or ctx ends. A BMC
// that cannot be queried is trusted once the action succeeds.
//
// PowerRestart asks for a fresh network boot: it sets the next boot to the
// network, then powers on a machine that is off and cycles one that is on.
// A plain PowerUp never cycles: MAAS's "on" did `--cycle --on-if-off` and
// rebooted healthy machines after a BMC blip.
func Carry(ctx context.Context, d Driver, params map[string]string, action machine.PowerAction, wait []time.Duration) (machine.PowerState, error) {
	if action == QueryAction {
		return d.Query(ctx, params)
	}
	want := machine.PowerOn
	var err error
	switch action {
	case machine.PowerUp:
		err = d.PowerOn(ctx, params)
	case SoftOffAction:
		want = machine.PowerOff
		err = d.PowerOff(ctx, params, true)
	case machine.PowerDown:
		want = machine.PowerOff
		err = d.PowerOff(ctx, params, false)
	case machine.PowerRestart:
		err = restart(ctx, d, params)
	default:
		return machine.PowerUnknown, &Error{Kind: BadParams, Op: string(action), Err: fmt.Errorf("unknown power action %q", action)}
	}
	if err != nil {
		return machine.PowerError, err
	}
	return verify(ctx, d, params, want, wait)
}

// SoftOffAction asks the OS to shut down rather than cutting power.
const SoftOffAction machine.PowerAction = "soft_off"

func restart(ctx context.Context, d Driver, params map[string]string) error {
	if err := d.SetBootDevice(ctx, params, BootDevice{Device: "network"}); err != nil && !errors.Is(err, ErrUnsupported) {
		return err
	}
	st, err := d.Query(ctx, params)
	switch {
	case errors.Is(err, ErrUnsupported):
		return d.PowerCycle(ctx, params) // cannot tell: a cycle powers on an off machine too
	case err != nil:
		return err
	case st == machine.PowerOn:
		return d.PowerCycle(ctx, params)
	}
	return d.PowerOn(ctx, params)
}

func verify(ctx context.Context, d Driver, params map[string]string, want machine.PowerState, wait []time.Duration) (machine.PowerState, error) {
	for i := 0; ; i++ {
		st, err := d.Query(ctx, params)
		if errors.Is(err, ErrUnsupported) {
			return machine.PowerUnknown, nil
		}
		if err == nil && st == want {
			return st, nil
		}
		delay := wait[min(i, len(wait)-1)]
		select {
		case <-ctx.Done():
			if err != nil {
				return machine.PowerError, err
			}
			return st, &Error{Kind: Timeout, Op: "verify", Err: fmt.Errorf("the BMC still reports %s, want %s", st, want)}
		case <-time.After(delay):
		}
	}
}
