package machine

import (
	"errors"
	"fmt"
	"time"
)

// Action is something asked of a machine. User actions carry MAAS's op names;
// the rest come from Anvil itself (the ephemeral environment's signals, the
// power coordinator, the status monitor).
type Action string

const (
	Commission     Action = "commission"
	Abort          Action = "abort"
	Allocate       Action = "allocate"
	Deploy         Action = "deploy"
	Release        Action = "release"
	MarkBroken     Action = "mark_broken"
	MarkFixed      Action = "mark_fixed"
	EnterRescue    Action = "rescue_mode"
	ExitRescue     Action = "exit_rescue_mode"
	Test           Action = "test"
	PowerOnAction  Action = "power_on"
	PowerOffAction Action = "power_off"

	// Succeed ends the current phase well: the environment signalled OK,
	// or (for Releasing) the power-off was confirmed.
	Succeed Action = "succeed"
	// Fail ends the current phase badly; Input.Comment says why.
	Fail Action = "fail"
	// Heartbeat says the phase is still making progress.
	Heartbeat Action = "heartbeat"
	// Installed says a deployment's image is on disk: the machine boots
	// it next, and the boot that shows it did ends the phase.
	Installed Action = "installed"
)

// UserActions are the actions a person may ask for through the API.
var UserActions = []Action{
	Commission, Abort, Allocate, Deploy, Release, MarkBroken, MarkFixed,
	EnterRescue, ExitRescue, Test, PowerOnAction, PowerOffAction,
}

// SystemActions are the actions only Anvil itself takes.
var SystemActions = []Action{Succeed, Fail, Heartbeat, Installed}

// Actor is who asks. System is Anvil itself.
type Actor struct {
	Name   string
	Admin  bool
	System bool
}

// SystemActor is Anvil acting on its own behalf.
var SystemActor = Actor{Name: "", System: true}

// EraseMode says how a release wipes the disks.
type EraseMode string

const (
	EraseNone   EraseMode = ""
	EraseQuick  EraseMode = "quick"
	EraseFull   EraseMode = "full"
	EraseSecure EraseMode = "secure"
	// EraseSecureQuick is secure_erase and quick_erase together: the
	// disks' own secure erase, and a quick one on disks without it.
	EraseSecureQuick EraseMode = "secure-quick"
)

// String is the mode as the release event says it.
func (e EraseMode) String() string {
	if e == EraseSecureQuick {
		return "secure (else quick)"
	}
	return string(e)
}

// Input is one request to Step.
type Input struct {
	Action  Action
	Actor   Actor
	Now     time.Time
	Comment string // the user's comment, or the reason a phase failed
	From    string // the address the request came from, when known
	// Release options.
	Erase EraseMode
	// Deploy options; empty means the site defaults.
	OSystem      string
	DistroSeries string
	UserData     []byte
	Hostname     string // renames the machine for the deployment, when set
	Ephemeral    bool   // deploy to memory (ephemeral_deploy), not to disk
	// Annotations are set_workload_annotations' keys; an empty value
	// removes its key.
	Annotations map[string]string
}

// PowerAction is what the lifecycle needs done to power. The coordinator
// carries it out through the machine's serialised power queue.
type PowerAction string

const (
	PowerNone PowerAction = ""
	PowerUp   PowerAction = "on"
	PowerDown PowerAction = "off"
	// PowerRestart asks for a fresh network boot: power on if off, cycle if
	// on. Only phases that need a netboot ask for it; a plain "on" never
	// cycles a running machine.
	PowerRestart PowerAction = "cycle"
)

// Outcome is what a Step decided: the machine's next state, what power must
// do, and what to record.
type Outcome struct {
	Machine Machine
	Power   PowerAction
	Events  []Event
}

// Changed reports whether the status changed.
func (o Outcome) Changed(before Status) bool { return o.Machine.Status != before }

// Config holds the lifecycle's tunables.
type Config struct {
	// Timeout is how long a monitored status may go without progress.
	Timeout time.Duration
	// ReleasingTimeout replaces Timeout for Releasing, which only powers off.
	ReleasingTimeout time.Duration
	// DeployFactor multiplies Timeout for Deploying, which writes a disk.
	DeployFactor int
	// DefaultOSystem and DefaultDistroSeries are used when a deploy names none.
	DefaultOSystem      string
	DefaultDistroSeries string
}

// DefaultConfig is MAAS's: 30 minutes, 5 for releasing, deploy twice as long.
func DefaultConfig() Config {
	return Config{
		Timeout: 30 * time.Minute, ReleasingTimeout: 5 * time.Minute, DeployFactor: 2,
		DefaultOSystem: "ubuntu", DefaultDistroSeries: "noble",
	}
}

// TimeoutFor returns how long status s may last without progress; zero for
// statuses that are not monitored.
func (c Config) TimeoutFor(s Status) time.Duration {
	switch {
	case !s.Monitored():
		return 0
	case s == Releasing:
		return c.ReleasingTimeout
	case s == Deploying:
		return time.Duration(c.DeployFactor) * c.Timeout
	}
	return c.Timeout
}

// ErrForbidden is returned when the actor may not take the action.
var ErrForbidden = errors.New("forbidden")

// TransitionError says that an action is not allowed in a status.
type TransitionError struct {
	Action Action
	Status Status
	Reason string
}

func (e *TransitionError) Error() string {
	msg := fmt.Sprintf("cannot %s a machine in status %s", e.Action, e.Status)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// ForbiddenError says who may take an action.
type ForbiddenError struct {
	Action Action
	Reason string
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("not allowed to %s this machine: %s", e.Action, e.Reason)
}

func (e *ForbiddenError) Unwrap() error { return ErrForbidden }
