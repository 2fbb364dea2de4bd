package machine

import (
	"fmt"
	"time"
)

// Step applies one input to a machine and returns what follows. It never
// changes m; on error the returned Outcome is empty and nothing may be stored.
func Step(m Machine, in Input, cfg Config) (Outcome, error) {
	h, ok := handlers[in.Action]
	if !ok {
		return Outcome{}, fmt.Errorf("unknown action %q", in.Action)
	}
	if err := h.authorise(in.Action, in.Actor, &m); err != nil {
		return Outcome{}, err
	}
	if in.Action != Lock && in.Action != Unlock {
		if err := CheckUnlocked(in.Actor, &m, in.Action); err != nil {
			return Outcome{}, err
		}
	}
	s := stepper{before: m.Status, m: m.Clone(), in: in, cfg: cfg}
	if err := h.apply(&s); err != nil {
		return Outcome{}, err
	}
	return s.outcome()
}

// handler is one action: who may take it and what it does.
type handler struct {
	who   who
	apply func(*stepper) error
}

type who int

const (
	anyUser     who = iota // any authenticated user (allocate: the machine must be free)
	ownerOnly              // the machine's owner or an admin
	ownerOrFree            // as ownerOnly, but anyone may take a free machine
	adminOnly
	systemOnly
)

func (h handler) authorise(action Action, a Actor, m *Machine) error {
	if a.System {
		return nil
	}
	switch h.who {
	case systemOnly:
		return &ForbiddenError{Action: action, Reason: "only Anvil itself takes this action"}
	case adminOnly:
		if !a.Admin {
			return &ForbiddenError{Action: action, Reason: "an administrator must do this"}
		}
	case ownerOrFree:
		if m.Owner == "" {
			return nil
		}
		fallthrough
	case ownerOnly:
		if !CanEdit(a, m) {
			return &ForbiddenError{Action: action, Reason: "the machine is not yours"}
		}
	}
	return nil
}

var handlers map[Action]handler

func init() {
	handlers = map[Action]handler{
		Commission:     {adminOnly, (*stepper).commission},
		Abort:          {ownerOnly, (*stepper).abort},
		Allocate:       {anyUser, (*stepper).allocate},
		Deploy:         {ownerOrFree, (*stepper).deploy}, // MAAS lets any user deploy a free Ready machine
		Release:        {ownerOnly, (*stepper).release},
		MarkBroken:     {ownerOnly, (*stepper).markBroken},
		MarkFixed:      {adminOnly, (*stepper).markFixed},
		EnterRescue:    {adminOnly, (*stepper).enterRescue},
		ExitRescue:     {adminOnly, (*stepper).exitRescue},
		Test:           {adminOnly, (*stepper).test},
		PowerOnAction:  {ownerOnly, (*stepper).powerOn},
		PowerOffAction: {ownerOnly, (*stepper).powerOff},
		Succeed:        {systemOnly, (*stepper).succeed},
		Fail:           {systemOnly, (*stepper).fail},
		Heartbeat:      {systemOnly, (*stepper).heartbeat},
		Installed:      {systemOnly, (*stepper).installed},

		Lock:                   {ownerOnly, (*stepper).lock},
		Unlock:                 {ownerOnly, (*stepper).unlock},
		OverrideFailedTesting:  {adminOnly, (*stepper).overrideFailedTesting},
		SetWorkloadAnnotations: {ownerOnly, (*stepper).setWorkloadAnnotations},
	}
	for _, a := range append(append([]Action(nil), UserActions...), Operations...) {
		if _, ok := handlers[a]; !ok {
			panic("machine: no handler for " + string(a))
		}
	}
}

// stepper accumulates one step's changes.
type stepper struct {
	before Status
	m      Machine
	in     Input
	cfg    Config
	power  PowerAction
	events []Event
	// path is every status the step passed through, for the table check.
	path []Status
}

func (s *stepper) refuse(reason string) error {
	return &TransitionError{Action: s.in.Action, Status: s.before, Reason: reason}
}

// moveTo changes status, arming or clearing the expiry and recording why.
func (s *stepper) moveTo(to Status, evType, text string) {
	s.path = append(s.path, to)
	from := s.m.Status
	s.m.Status = to
	if to == Ready {
		// Ready is MAAS's free pool, whichever way the machine got there
		// (mark_fixed, a passed test, commissioning a broken machine): an
		// owner left behind would make it unallocatable and unreleasable.
		s.m.Owner, s.m.OSystem, s.m.DistroSeries, s.m.EraseMode, s.m.UserData, s.m.OwnerData = "", "", "", EraseNone, nil, nil
		s.m.EphemeralDeploy = false
	}
	if d := s.cfg.TimeoutFor(to); d > 0 {
		s.m.StatusExpires = s.in.Now.Add(d)
	} else {
		s.m.StatusExpires = time.Time{}
	}
	s.m.StatusMessage = text
	s.record(LevelInfo, evType, fmt.Sprintf("%s (%s → %s)", text, from, to))
}

func (s *stepper) record(level Level, evType, text string) {
	s.events = append(s.events, Event{
		SystemID: s.m.SystemID, Hostname: s.m.Hostname, Type: evType, Level: level,
		Description: text, User: s.in.Actor.Name, Created: s.in.Now,
	})
}

// outcome checks every status change against MAAS's table: an action that
// breaks it is a bug here, and is refused rather than stored.
func (s *stepper) outcome() (Outcome, error) {
	from := s.before
	for _, to := range s.path {
		if to != from && !CanTransition(from, to) {
			return Outcome{}, fmt.Errorf("machine: %s would move %s → %s, which the transition table forbids", s.in.Action, from, to)
		}
		from = to
	}
	s.askPerson()
	if s.m.Status != s.before {
		// The loop guard counts boots in a row within one status.
		s.m.WrongBoots = 0
	}
	if len(s.path) > 0 || s.power != PowerNone || len(s.events) > 0 {
		s.m.Updated = s.in.Now
	}
	return Outcome{Machine: s.m, Power: s.power, Events: s.events}, nil
}

func (s *stepper) withComment(text string) string {
	if s.in.Comment != "" {
		return text + ": " + s.in.Comment
	}
	return text
}

func (s *stepper) by(text string) string {
	if s.in.Actor.Name != "" {
		text += " by " + s.in.Actor.Name
	}
	return s.withComment(text)
}

// startPhase enters an in-progress status that needs a fresh network boot.
func (s *stepper) startPhase(to Status, evType, text string) {
	s.m.PreviousStatus = s.m.Status
	s.moveTo(to, evType, s.by(text))
	s.power = PowerRestart
}

func (s *stepper) commission() error {
	if s.m.Status == Commissioning || !CanTransition(s.m.Status, Commissioning) {
		return s.refuse("")
	}
	s.startPhase(Commissioning, "Commissioning", "Commissioning started")
	return nil
}

func (s *stepper) test() error {
	if s.m.Status == Testing || s.m.Status == Commissioning || !CanTransition(s.m.Status, Testing) ||
		s.m.Status.InProgress() {
		return s.refuse("")
	}
	s.startPhase(Testing, "Testing", "Testing started")
	return nil
}

// invalidTransition refuses in MAAS's words (its NodeStateViolation).
func (s *stepper) invalidTransition(to Status) error {
	return s.refuse(fmt.Sprintf("Invalid transition: %s -> %s.", s.before, to))
}

// enterRescue boots the environment with an SSH server for the owner. A
// machine nobody owns becomes the rescuer's for the while, as MAAS hands
// it to the user who started rescue mode; an owned one keeps its owner,
// whose keys (and the workload's) stay the ones that count.
func (s *stepper) enterRescue() error {
	if !CanTransition(s.m.Status, EnteringRescueMode) {
		return s.invalidTransition(EnteringRescueMode)
	}
	if s.m.Owner == "" {
		s.m.Owner = s.in.Actor.Name
	}
	s.m.RescueFrom = s.in.From
	s.startPhase(EnteringRescueMode, "Rescue mode", "Entering rescue mode")
	return nil
}

// exitRescue returns the machine to where it was: a deployed one is
// cycled and boots its disk (the boot config says local while exiting);
// any other is powered off, which ends the exit.
func (s *stepper) exitRescue() error {
	if !CanTransition(s.m.Status, ExitingRescueMode) {
		return s.invalidTransition(ExitingRescueMode)
	}
	s.moveTo(ExitingRescueMode, "Rescue mode", s.by("Exiting rescue mode"))
	if s.m.PreviousStatus == Deployed {
		s.power = PowerRestart // back to its local disk
	} else {
		s.power = PowerDown
	}
	return nil
}

func (s *stepper) abort() error {
	var to Status
	switch s.m.Status {
	case Commissioning, Testing, EnteringRescueMode:
		to = s.m.PreviousStatus
		if !CanTransition(s.m.Status, to) {
			to, _ = s.m.Status.FailedTwin()
		}
	case Deploying:
		to = Allocated
	case DiskErasing:
		to = FailedDiskErasing
	default:
		return s.refuse("there is nothing in progress to abort")
	}
	s.moveTo(to, "Aborted", s.by("Aborted "+s.before.String()))
	s.power = PowerDown
	return nil
}

func (s *stepper) allocate() error {
	if s.m.Status != Ready {
		return s.refuse("only a Ready machine can be allocated")
	}
	if s.m.Owner != "" {
		return s.refuse("already allocated to " + s.m.Owner)
	}
	if s.in.Actor.Name == "" {
		return &ForbiddenError{Action: s.in.Action, Reason: "an allocation needs a user to own the machine"}
	}
	s.m.Owner = s.in.Actor.Name
	s.moveTo(Allocated, "Allocated", s.by("Allocated to "+s.in.Actor.Name))
	return nil
}

func (s *stepper) deploy() error {
	switch s.m.Status {
	case Ready:
		// MAAS's deploy allocates a free machine to the caller on the way.
		if err := s.allocate(); err != nil {
			return err
		}
	case Allocated:
	default:
		return s.refuse("only an Allocated or Ready machine can be deployed")
	}
	s.m.OSystem = firstNonEmpty(s.in.OSystem, s.cfg.DefaultOSystem)
	s.m.DistroSeries = firstNonEmpty(s.in.DistroSeries, s.cfg.DefaultDistroSeries)
	s.m.UserData, s.m.Netboot = append([]byte(nil), s.in.UserData...), true
	s.m.EphemeralDeploy = s.in.Ephemeral
	if s.in.Hostname != "" {
		s.m.Hostname = s.in.Hostname
	}
	s.startPhase(Deploying, "Deploying", fmt.Sprintf("Deploying %s/%s", s.m.OSystem, s.m.DistroSeries))
	return nil
}

func (s *stepper) release() error {
	switch s.m.Status {
	case Allocated, Reserved, Deploying, Deployed, FailedDeployment, FailedReleasing, FailedDiskErasing:
	case Broken:
		if s.m.Owner == "" {
			return s.refuse("a broken machine with no owner is fixed, not released")
		}
	default:
		return s.refuse("")
	}
	s.m.PreviousStatus = s.m.Status
	s.m.EraseMode = s.in.Erase
	if s.m.EphemeralDeploy && s.in.Erase != EraseNone {
		// A deployment in memory wrote nothing: there is nothing to wipe.
		s.m.EraseMode = EraseNone
		s.moveTo(Releasing, "Releasing", s.by("Releasing (deployed to memory: no disk was written, so none is erased)"))
		s.power = PowerDown
		return nil
	}
	if s.in.Erase != EraseNone {
		s.moveTo(DiskErasing, "Releasing", s.by(fmt.Sprintf("Releasing with %s erase", s.in.Erase)))
		s.power = PowerRestart // the erase runs in the ephemeral environment
		return nil
	}
	s.moveTo(Releasing, "Releasing", s.by("Releasing"))
	s.power = PowerDown
	return nil
}

func (s *stepper) markBroken() error {
	if s.m.Status == Broken || !CanTransition(s.m.Status, Broken) {
		return s.refuse("")
	}
	s.m.PreviousStatus = s.m.Status
	s.moveTo(Broken, "Marked broken", s.by("Marked broken"))
	return nil
}

func (s *stepper) markFixed() error {
	if s.m.Status != Broken {
		return s.refuse("only a Broken machine can be marked fixed")
	}
	to := Ready
	if s.m.PreviousStatus == Deployed && s.m.Owner != "" {
		to = Deployed
	}
	s.moveTo(to, "Marked fixed", s.by("Marked fixed"))
	return nil
}

func (s *stepper) powerOn() error {
	s.power = PowerUp
	s.record(LevelInfo, "Powering on", s.by("Power on requested"))
	return nil
}

func (s *stepper) powerOff() error {
	s.power = PowerDown
	s.record(LevelInfo, "Powering off", s.by("Power off requested"))
	return nil
}

func (s *stepper) succeed() error {
	switch s.m.Status {
	case Commissioning:
		s.moveTo(Ready, "Ready", s.withComment("Commissioning finished"))
		s.power = PowerDown
	case Testing:
		to := s.m.PreviousStatus
		if !CanTransition(Testing, to) || to.InProgress() || to.Failed() {
			to = Ready
		}
		s.moveTo(to, "Tested", s.withComment("Testing passed"))
		if to != Deployed {
			s.power = PowerDown
		}
	case Deploying:
		s.moveTo(Deployed, "Deployed", s.withComment("Deployed"))
	case Deployed:
		if !s.m.EphemeralDeploy {
			return s.refuse("no phase is in progress")
		}
		// A deployment in memory boots again on every boot.
		s.record(LevelInfo, "Deployed", s.withComment("Booted the deployment in memory again"))
	case Releasing, DiskErasing:
		s.m.Owner, s.m.OSystem, s.m.DistroSeries, s.m.EraseMode, s.m.UserData, s.m.OwnerData = "", "", "", EraseNone, nil, nil
		s.moveTo(Ready, "Released", s.withComment("Released"))
		s.power = PowerDown
	case EnteringRescueMode:
		s.moveTo(RescueMode, "Rescue mode", s.withComment("In rescue mode"))
	case RescueMode:
		// The machine rebooted into the rescue environment again (someone
		// rebooted it from the shell): its new host key is news.
		s.record(LevelInfo, "Rescue mode", s.withComment("Rescue environment up again"))
	case ExitingRescueMode:
		to := s.m.PreviousStatus
		if !CanTransition(ExitingRescueMode, to) {
			to = Ready
		}
		if ownerless(to) {
			s.m.Owner = "" // the rescuer held it only for the rescue
		}
		s.moveTo(to, "Rescue mode", s.withComment("Left rescue mode"))
	default:
		return s.refuse("no phase is in progress")
	}
	return nil
}

func (s *stepper) fail() error {
	to, ok := s.m.Status.FailedTwin()
	if !ok {
		return s.refuse("no phase is in progress")
	}
	reason := s.in.Comment
	if reason == "" {
		reason = "no reason given"
	}
	s.moveTo(to, "Failed", s.before.String()+" failed: "+reason)
	s.events[len(s.events)-1].Level = LevelError
	return nil
}

// installed: the image is on disk. The machine is network-booted once
// more through its BMC, so that the rack answers it with a local boot: that
// answer (or the deployed OS calling home) shows the disk boots.
func (s *stepper) installed() error {
	if s.m.Status != Deploying || !s.m.Netboot {
		return s.refuse("no image is being written")
	}
	s.m.Netboot = false
	s.m.StatusExpires = s.in.Now.Add(s.cfg.TimeoutFor(Deploying))
	s.record(LevelInfo, "Image written", s.withComment("Image written to disk; booting it"))
	s.power = PowerRestart
	return nil
}

func (s *stepper) heartbeat() error {
	if !s.m.Status.Monitored() {
		return s.refuse("no phase is in progress")
	}
	s.m.StatusExpires = s.in.Now.Add(s.cfg.TimeoutFor(s.m.Status))
	return nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
