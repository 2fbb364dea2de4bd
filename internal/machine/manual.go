package machine

import (
	"fmt"
	"strings"
)

// ManualPower is the power type of a machine only a person can power.
const ManualPower = "manual"

// askPerson ends a step that needs power Anvil cannot apply (power type
// manual): the status message and a warning on the timeline say what the
// operator must do now, since nothing else will make the machine boot.
func (s *stepper) askPerson() {
	if s.m.PowerType != ManualPower || s.power == PowerNone {
		return
	}
	var what string
	switch s.power {
	case PowerUp:
		what = "power it on now"
	case PowerRestart:
		what = "power it on now (reset it if it is on), so that it network-boots"
	case PowerDown:
		what = "power it off now"
	default:
		what = fmt.Sprintf("power it %s now", s.power)
	}
	text := what + ": " + manualReason
	// An earlier ask on the message is replaced, not added to.
	msg := s.m.StatusMessage
	if i := strings.Index(msg, "power it "); i >= 0 && strings.HasSuffix(msg, manualReason) {
		msg = strings.TrimSuffix(msg[:i], "; ")
	}
	if msg != "" {
		msg += "; "
	}
	s.m.StatusMessage = msg + text
	s.record(LevelWarning, "Power needed", text)
}

const manualReason = "Anvil cannot power this machine (power type manual)"
