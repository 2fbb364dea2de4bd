package power

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

func TestResume(t *testing.T) {
	states := []machine.PowerState{machine.PowerOn, machine.PowerOff, machine.PowerUnknown, machine.PowerError}
	want := map[machine.PowerAction][4]Step{
		// on, off, unknown, error
		machine.PowerUp:      {StepDone, StepOn, StepOn, StepOn},
		machine.PowerRestart: {StepDone, StepNetOn, StepNetOn, StepNetOn},
		machine.PowerDown:    {StepRepeat, StepDone, StepRepeat, StepRepeat},
		SoftOffAction:        {StepRepeat, StepDone, StepRepeat, StepRepeat},
		QueryAction:          {StepUnknown, StepUnknown, StepUnknown, StepUnknown},
	}
	for action, steps := range want {
		for i, st := range states {
			if got := Resume(action, st); got != steps[i] {
				t.Errorf("Resume(%s, %s) = %s, want %s", action, st, got, steps[i])
			}
		}
	}
	// Whatever the BMC says, a re-run never cycles.
	for action := range want {
		for _, st := range states {
			if s := Resume(action, st); action == machine.PowerRestart && s == StepRepeat {
				t.Errorf("a re-run of a cycle would cycle again (BMC says %s)", st)
			}
		}
	}
}
