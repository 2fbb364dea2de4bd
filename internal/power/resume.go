package power

import (
	"context"
	"errors"
	"time"

	"github.com/anvilmetal/anvil/internal/machine"
)

// Step is what a re-run of a command does.
type Step string

const (
	StepDone    Step = "done"    // the machine is already where the command leads
	StepOn      Step = "on"      // power on (a no-op on a machine that is on)
	StepNetOn   Step = "net-on"  // next boot from the network, then power on
	StepRepeat  Step = "repeat"  // send the command again: it is safe to repeat
	StepUnknown Step = "unknown" // not a command that runs through Resume
)

// Resume decides what a command re-run after its worker stopped (its lease
// ran out after it marked the command sent) does, from what the BMC
// reports now. The command may have reached the BMC, so a cycle is never
// sent twice: a machine that is on after a cycle was sent has been cycled
// as far as anyone can tell, and one that is off is powered on instead.
// Offs are idempotent and are repeated unless the machine is already off.
// A BMC that cannot be queried (unknown) gets the step that is harmless
// whether or not the first command arrived.
func Resume(action machine.PowerAction, now machine.PowerState) Step {
	switch action {
	case machine.PowerUp:
		if now == machine.PowerOn {
			return StepDone
		}
		return StepOn
	case machine.PowerRestart:
		if now == machine.PowerOn {
			return StepDone
		}
		return StepNetOn
	case machine.PowerDown, SoftOffAction:
		if now == machine.PowerOff {
			return StepDone
		}
		return StepRepeat
	}
	return StepUnknown
}

// CarryResumed is Carry for a command that may already have reached the
// BMC: it asks the BMC first and does what Resume says. It also returns
// the step, for the record.
func CarryResumed(ctx context.Context, d Driver, params map[string]string, action machine.PowerAction, wait []time.Duration) (machine.PowerState, Step, error) {
	now, err := d.Query(ctx, params)
	switch {
	case errors.Is(err, ErrUnsupported):
		now = machine.PowerUnknown
	case err != nil:
		return machine.PowerError, StepUnknown, err
	}
	step := Resume(action, now)
	switch step {
	case StepDone:
		return now, step, nil
	case StepOn:
		state, err := Carry(ctx, d, params, machine.PowerUp, wait)
		return state, step, err
	case StepNetOn:
		if err := d.SetBootDevice(ctx, params, BootDevice{Device: "network"}); err != nil && !errors.Is(err, ErrUnsupported) {
			return machine.PowerError, step, err
		}
		state, err := Carry(ctx, d, params, machine.PowerUp, wait)
		return state, step, err
	}
	state, err := Carry(ctx, d, params, action, wait)
	return state, step, err
}
