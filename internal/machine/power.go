package machine

import (
	"fmt"
	"time"
)

// PowerReport is the outcome of one power command, as the coordinator saw it.
type PowerReport struct {
	Action   PowerAction
	State    PowerState // what the BMC said afterwards; unknown if it cannot tell
	Err      error
	Duration time.Duration
	User     string
	Now      time.Time
	// Note, when set, says how the command was carried out (a re-run that
	// found the machine already where the command leads); it ends the
	// event's text.
	Note string
}

// ApplyPower records a power result on the machine and takes the lifecycle
// step it implies: a confirmed power-off ends Releasing, and a command that
// failed during a phase Anvil drives fails that phase, since the phase
// cannot go on without the machine booting (or stopping) as asked.
func ApplyPower(m Machine, r PowerReport, cfg Config) Outcome {
	c := m.Clone()
	if r.State != "" && r.State != PowerUnknown || r.Err != nil {
		c.PowerState = r.State
	}
	c.Updated = r.Now
	if r.Err == nil && r.Action != "query" {
		c.Watch = ConfirmPower(c.Watch, r.State)
	}
	ev := Event{SystemID: c.SystemID, Hostname: c.Hostname, User: r.User, Created: r.Now, Level: LevelInfo}
	if r.Err != nil {
		ev.Type, ev.Level = "Power failed", LevelError
		ev.Description = fmt.Sprintf("Power %s failed after %s: %v", r.Action, r.Duration.Round(time.Millisecond), r.Err)
	} else {
		ev.Type = "Power " + string(r.Action)
		ev.Description = fmt.Sprintf("Power %s done in %s; power is %s", r.Action, r.Duration.Round(time.Millisecond), stateWord(r.State))
	}
	if r.Note != "" {
		ev.Description += " (" + r.Note + ")"
	}
	out := Outcome{Machine: c, Events: []Event{ev}}

	var in *Input
	switch {
	case r.Err == nil && r.Action == PowerDown && c.Status == Releasing:
		in = &Input{Action: Succeed, Comment: "powered off"}
	case r.Err == nil && r.Action == PowerDown && c.Status == ExitingRescueMode && c.PreviousStatus != Deployed:
		// Leaving rescue for anything but a deployed OS ends with the
		// machine off; nothing else will signal it.
		in = &Input{Action: Succeed, Comment: "powered off"}
	case r.Err != nil && c.Status.InProgress() && r.Action != "query":
		in = &Input{Action: Fail, Comment: fmt.Sprintf("power %s failed: %v", r.Action, r.Err)}
	}
	if in == nil {
		return out
	}
	in.Actor, in.Now = SystemActor, r.Now
	next, err := Step(c, *in, cfg)
	if err != nil {
		return out
	}
	next.Events = append(out.Events, next.Events...)
	return next
}

func stateWord(s PowerState) string {
	if s == "" || s == PowerUnknown {
		return "unknown (this power type cannot be queried)"
	}
	return string(s)
}
