package machine

import (
	"fmt"
	"slices"
	"time"
)

// Power drift: MAAS only records the power state it polls, so a deployed
// machine that loses power stays off. Anvil owns power state instead. A
// monitor polls every machine's BMC and hands each reading to Observe, which
// debounces it, compares it with what Anvil expects (ExpectedPower) and
// decides what to do about a difference: correct it, warn about it, or fail
// the phase that needs the machine in the other state. Like Step, Observe is
// a pure function over plain data; the monitor stores the PowerWatch it
// returns with the machine and carries out the decision (ApplyDrift).

// DriftPolicy says what Anvil does when a machine's power drifts from what
// it expects outside the phases Anvil drives.
type DriftPolicy string

const (
	// InheritDrift ("") takes the pool's policy, else DefaultDriftPolicy.
	InheritDrift DriftPolicy = ""
	// Enforce queues the power action that restores the expected state,
	// within the flap guard (DriftConfig.GuardMax per GuardWindow).
	Enforce DriftPolicy = "enforce"
	// Warn records an event and flags the machine; it never acts.
	Warn DriftPolicy = "warn"
)

// DefaultDriftPolicy applies when neither the machine nor its pool sets one.
const DefaultDriftPolicy = Enforce

// ParseDriftPolicy accepts "enforce", "warn" (any case) and "" (inherit).
func ParseDriftPolicy(v string) (DriftPolicy, error) {
	for _, p := range []DriftPolicy{InheritDrift, Enforce, Warn} {
		if equalFold(v, string(p)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown drift policy %q (want enforce, warn, or empty to inherit)", v)
}

// ResolveDriftPolicy returns the policy in effect for a machine: its own,
// else its pool's, else DefaultDriftPolicy.
func ResolveDriftPolicy(machinePolicy, poolPolicy DriftPolicy) DriftPolicy {
	switch {
	case machinePolicy != InheritDrift:
		return machinePolicy
	case poolPolicy != InheritDrift:
		return poolPolicy
	}
	return DefaultDriftPolicy
}

// AskSource says who asked for a power action through Anvil.
type AskSource string

const (
	// AskedByUser is an explicit power_on or power_off through the API.
	AskedByUser AskSource = "user"
	// AskedByLifecycle is a power action a lifecycle step needed
	// (deploy's network boot, release's power-off, ...).
	AskedByLifecycle AskSource = "lifecycle"
	// AskedAtAdoption is the state a machine was found in when Anvil
	// started watching it (AdoptPowerWatch).
	AskedAtAdoption AskSource = "adopted"
)

// PowerAsk is one power action asked through Anvil. Drift corrections are
// not asks: they restore what was asked and are kept in
// PowerWatch.Corrections instead.
type PowerAsk struct {
	Action PowerAction `json:"action,omitempty"`
	By     AskSource   `json:"by,omitempty"`
	// Status is the machine's status once the ask was made (after the
	// step that made it), so that an ask only shapes the expectation of
	// the status it was made for.
	Status Status    `json:"status"`
	At     time.Time `json:"at,omitzero"`
}

// State is the power state the ask leads to: on for on and cycle, off for
// off, "" for anything else (no ask, a query).
func (a PowerAsk) State() PowerState {
	switch a.Action {
	case PowerUp, PowerRestart:
		return PowerOn
	case PowerDown:
		return PowerOff
	}
	return ""
}

// PowerWatch is the power monitor's memory of one machine. It is plain data
// meant to be stored with the machine as one JSON document (the tags below
// are its stable field names); only Drift is worth a column of its own, for
// listing drifting machines.
type PowerWatch struct {
	// Observed is the debounced power state: it changes only after two
	// good readings in a row agree on a new state. "" until then.
	Observed PowerState `json:"observed,omitempty"`
	// Candidate is a good reading that differs from Observed, waiting for
	// a second one to confirm it.
	Candidate PowerState `json:"candidate,omitempty"`
	// Expected is what Anvil wanted at the last good reading
	// (ExpectedPower); "" means no expectation.
	Expected PowerState `json:"expected,omitempty"`
	// LastAsk is the last power action asked through Anvil (NoteAsked).
	LastAsk PowerAsk `json:"last_ask,omitzero"`
	// Drift is set while the debounced state disagrees with Expected
	// (outside the grace period after an ask or correction), from
	// DriftSince; Reason says what Anvil does about it.
	Drift      bool      `json:"drift,omitempty"`
	DriftSince time.Time `json:"drift_since,omitzero"`
	Reason     string    `json:"reason,omitempty"`
	// Corrections are the times of corrective actions within the guard
	// window, oldest first.
	Corrections []time.Time `json:"corrections,omitempty"`
	// GuardTripped is when the flap guard made this machine behave as
	// warn; zero unless it did. ResetGuard clears it.
	GuardTripped time.Time `json:"guard_tripped,omitzero"`
	// Failures counts consecutive failed readings; the poller backs off
	// on it (NextPoll). ReadError is the last failure, in words.
	Failures  int    `json:"failures,omitempty"`
	ReadError string `json:"read_error,omitempty"`
	// ReadAt is when the last reading, good or failed, was taken.
	ReadAt time.Time `json:"read_at,omitzero"`
}

// clone copies w so that nothing returned aliases the input.
func (w PowerWatch) clone() PowerWatch {
	w.Corrections = slices.Clone(w.Corrections)
	return w
}

// Reading is one power query's result.
type Reading struct {
	State PowerState
	Err   error // nil if the BMC answered
	At    time.Time
}

// good reports whether the reading says something about power: the BMC
// answered with on or off.
func (r Reading) good() bool {
	return r.Err == nil && (r.State == PowerOn || r.State == PowerOff)
}

// DriftConfig holds the drift monitor's tunables for one machine.
type DriftConfig struct {
	// Policy is the effective policy (ResolveDriftPolicy); "" means
	// DefaultDriftPolicy, and a value Anvil does not know acts as Warn.
	Policy DriftPolicy
	// GuardWindow and GuardMax are the flap guard: after GuardMax
	// corrections within GuardWindow, the next drift makes the machine
	// behave as warn until ResetGuard. Zero or less means the default.
	GuardWindow time.Duration
	GuardMax    int
	// Grace is how long after an ask or a correction a disagreeing state
	// is expected (the BMC and the machine lag behind what was asked).
	// Zero means the default; a negative value means no grace.
	Grace time.Duration
	// FailuresToWarn is how many failed readings in a row make a WARNING
	// event (once); zero or less means the default.
	FailuresToWarn int
}

// DefaultDriftConfig: enforce, at most 3 corrections per hour, 2 minutes of
// grace, a warning after 3 failed readings.
func DefaultDriftConfig() DriftConfig {
	return DriftConfig{Policy: DefaultDriftPolicy, GuardWindow: time.Hour, GuardMax: 3, Grace: 2 * time.Minute, FailuresToWarn: 3}
}

func (c DriftConfig) withDefaults() DriftConfig {
	d := DefaultDriftConfig()
	if c.Policy == InheritDrift {
		c.Policy = d.Policy
	}
	if c.GuardWindow <= 0 {
		c.GuardWindow = d.GuardWindow
	}
	if c.GuardMax <= 0 {
		c.GuardMax = d.GuardMax
	}
	if c.Grace == 0 {
		c.Grace = d.Grace
	}
	if c.FailuresToWarn <= 0 {
		c.FailuresToWarn = d.FailuresToWarn
	}
	return c
}

// DriftDecision is what Observe decided beyond the new PowerWatch.
type DriftDecision struct {
	// Correct is the power action to queue (PowerUp or PowerDown), or
	// PowerNone. It has already been counted in PowerWatch.Corrections.
	Correct PowerAction
	// FailPhase, when set, is the reason to fail the phase in progress
	// (Step with Fail); ApplyDrift does it, and Step records the event.
	FailPhase string
	// Events are what to record: only changes, never one per poll.
	Events []Event
	// Flag is set while the machine drifts and Anvil is not correcting it
	// (warn policy, tripped guard, rescue mode): someone should look.
	Flag bool
}

// ExpectedPower is the power state Anvil wants m in, or "" when it has no
// expectation and any state is fine. Each status, and why:
//
//   - Deployed: on, since a deployed machine runs its owner's workload;
//     off when the last ask through Anvil, made while Deployed, was off
//     (the owner switched it off and it stays off). An off asked in an
//     earlier phase does not count: deploying ends with the machine on.
//     An off asked while Deployed survives Broken → mark_fixed → Deployed,
//     which is the same deployment.
//   - Commissioning, Deploying, Testing, DiskErasing, EnteringRescueMode,
//     RescueMode: on. Each runs the network-booted environment, which
//     cannot make progress on a machine that is off.
//   - Releasing: off. Releasing is the power-off; it ends when it is
//     confirmed.
//   - ExitingRescueMode: on when returning to Deployed (the exit cycles the
//     machine onto its local disk), else off (the exit powers it off),
//     following what ExitRescue asks.
//   - New, Ready, Allocated, Reserved, Broken, Missing, Retired and the
//     seven failed statuses: no expectation. Nothing runs there that needs
//     a particular state, and people work on such machines by hand. The
//     exception is an explicit power_on or power_off by a user made while
//     the machine was in that same status: then Anvil keeps what was asked.
//     A change of status drops it, because a status change is a hand-over
//     (a machine marked broken goes to a technician who must be free to
//     power it on; a retired machine should not be kept on).
func ExpectedPower(m Machine, w PowerWatch) PowerState {
	ask := w.LastAsk
	switch m.Status {
	case Deployed:
		if ask.Status == Deployed && ask.State() == PowerOff {
			return PowerOff
		}
		return PowerOn
	case Commissioning, Deploying, Testing, DiskErasing, EnteringRescueMode, RescueMode:
		return PowerOn
	case Releasing:
		return PowerOff
	case ExitingRescueMode:
		if m.PreviousStatus == Deployed {
			return PowerOn
		}
		return PowerOff
	}
	if ask.By == AskedByUser && ask.Status == m.Status {
		return ask.State()
	}
	return ""
}

// NoteAsked records a power action asked through Anvil, made when the
// machine was in status s (after the step that asked). A fresh ask starts
// the grace period and clears Drift and Candidate: the state is about to
// change on purpose, and a drift found afterwards is a new one. Queries and
// PowerNone are not asks and change nothing.
func NoteAsked(w PowerWatch, a PowerAsk) PowerWatch {
	if a.State() == "" {
		return w.clone()
	}
	c := w.clone()
	c.LastAsk = a
	c.Candidate = ""
	c.Drift, c.DriftSince, c.Reason = false, time.Time{}, ""
	return c
}

// NoteStep records the power action, if any, that a Step asked for: a
// user's power_on or power_off counts as explicit, anything else as the
// lifecycle's. Call it with the Step's input and outcome in the same
// transaction that stores the outcome.
func NoteStep(w PowerWatch, in Input, out Outcome) PowerWatch {
	by := AskedByLifecycle
	if in.Action == PowerOnAction || in.Action == PowerOffAction {
		by = AskedByUser
	}
	return NoteAsked(w, PowerAsk{Action: out.Power, By: by, Status: out.Machine.Status, At: in.Now})
}

// AdoptPowerWatch starts watching a machine Anvil has not watched before,
// taking its current state as wanted, so that switching the monitor on
// changes nothing: a deployed machine found off is recorded as asked off
// while Deployed and stays off. Other statuses get no ask (adoption is not
// a user's explicit ask).
func AdoptPowerWatch(m Machine, now time.Time) PowerWatch {
	var w PowerWatch
	if m.PowerState == PowerOn || m.PowerState == PowerOff {
		w.Observed = m.PowerState
	}
	if m.Status == Deployed && m.PowerState == PowerOff {
		w.LastAsk = PowerAsk{Action: PowerDown, By: AskedAtAdoption, Status: Deployed, At: now}
	}
	return w
}

// ConfirmPower records the state a power command verified when it finished
// (it asked the BMC after acting). That is as good as two readings in a
// row: the debounce is for polls that might catch a machine mid-change, not
// for a command that checked what it did. Without it the monitor would
// still hold the state from before the command until two more polls.
func ConfirmPower(w PowerWatch, s PowerState) PowerWatch {
	c := w.clone()
	if s == PowerOn || s == PowerOff {
		c.Observed, c.Candidate = s, ""
	}
	return c
}

// ResetGuard re-enables enforcement after the flap guard tripped: the
// operator has set the drift policy to enforce again. The correction count
// starts afresh.
func ResetGuard(w PowerWatch) PowerWatch {
	c := w.clone()
	c.GuardTripped = time.Time{}
	c.Corrections = nil
	return c
}

// drivenPhase reports whether s is a phase Anvil drives, in which drift
// fails the phase rather than being corrected.
func drivenPhase(s Status) bool { return s.InProgress() }

// Observe takes one reading of m's power and returns the updated watch and
// what to do. It never changes its inputs.
//
// A failed reading (an error, or a state other than on or off) only counts
// towards Failures; it neither confirms nor breaks a Candidate, and nothing
// is decided on it. A good reading resets Failures, moves the debounced
// state, and then:
//
//   - no expectation, or the state is as expected: any drift ends (with an
//     INFO event when the state came back to the expected one);
//   - within Grace of the last ask or correction: nothing yet, the BMC may
//     lag behind what was asked;
//   - in a phase Anvil drives: FailPhase with the reason, no correction;
//   - in RescueMode: a warning only, whatever the policy (an administrator
//     is working at the console and there is no phase to fail);
//   - otherwise under Enforce: Correct with the action that restores the
//     expected state, once per Grace while the drift lasts, until GuardMax
//     corrections within GuardWindow; the next drift trips the guard and
//     the machine behaves as Warn until ResetGuard;
//   - under Warn: Flag, and one WARNING event when the drift starts.
func Observe(m Machine, w PowerWatch, r Reading, cfg DriftConfig) (PowerWatch, DriftDecision) {
	cfg = cfg.withDefaults()
	nw := w.clone()
	nw.ReadAt = r.At
	var d DriftDecision
	record := func(level Level, typ, text string) {
		d.Events = append(d.Events, Event{
			SystemID: m.SystemID, Hostname: m.Hostname, Type: typ, Level: level, Description: text, Created: r.At,
		})
	}

	if !r.good() {
		nw.Failures++
		nw.ReadError = readingError(r)
		if nw.Failures == cfg.FailuresToWarn {
			record(LevelWarning, "Power query failed", fmt.Sprintf(
				"%d power queries in a row failed (last: %s); power drift is not watched until the BMC answers",
				nw.Failures, nw.ReadError))
		}
		return nw, d
	}
	if w.Failures >= cfg.FailuresToWarn {
		record(LevelInfo, "Power query", fmt.Sprintf("The BMC answers again after %d failed power queries; power is %s", w.Failures, r.State))
	}
	nw.Failures, nw.ReadError = 0, ""
	// Corrections older than the guard window no longer count.
	nw.Corrections = slices.DeleteFunc(nw.Corrections, func(t time.Time) bool { return r.At.Sub(t) >= cfg.GuardWindow })
	if len(nw.Corrections) == 0 {
		nw.Corrections = nil
	}

	// Debounce: a new state needs two good readings in a row.
	switch {
	case r.State == nw.Observed:
		nw.Candidate = ""
	case r.State == nw.Candidate:
		was := nw.Observed
		nw.Observed, nw.Candidate = r.State, ""
		if was != "" { // the first confirmed state is not a change
			record(LevelInfo, "Power state", fmt.Sprintf("Power is now %s (was %s)", nw.Observed, was))
		}
	default:
		nw.Candidate = r.State
	}

	expected := ExpectedPower(m, nw)
	nw.Expected = expected
	if expected == "" || nw.Observed == "" || nw.Observed == expected {
		if nw.Drift && expected != "" && nw.Observed == expected {
			record(LevelInfo, "Power drift cleared", fmt.Sprintf("Power is %s again, as expected (drifted for %s)",
				expected, r.At.Sub(nw.DriftSince).Round(time.Second)))
		}
		nw.Drift, nw.DriftSince, nw.Reason = false, time.Time{}, ""
		return nw, d
	}
	if inGrace(nw, r.At, cfg.Grace) {
		return nw, d
	}
	if r.State == expected {
		// The machine is on its way back (a correction or someone at the
		// console): the drift stands until a second reading confirms it
		// is over, but there is nothing to correct. Acting here would
		// answer one power loss with two corrections.
		return nw, d
	}

	starts := !nw.Drift
	if starts {
		nw.Drift, nw.DriftSince = true, r.At
	}
	what := fmt.Sprintf("the machine is %s while %s; expected %s", nw.Observed, m.Status, expected)

	switch {
	case drivenPhase(m.Status):
		d.FailPhase = "power drift: " + what
		nw.Reason = d.FailPhase + "; the phase is failed"
		return nw, d
	case m.Status == RescueMode:
		warnDrift(&nw, &d, starts, what, "in rescue mode Anvil only warns", record)
		return nw, d
	}

	// Enforce (unless the guard tripped) or warn.
	policy := cfg.Policy
	if policy != Enforce {
		warnDrift(&nw, &d, starts, what, fmt.Sprintf("the drift policy is %s, so Anvil only warns", policy), record)
		return nw, d
	}
	if !nw.GuardTripped.IsZero() {
		warnDrift(&nw, &d, starts, what, fmt.Sprintf(
			"the flap guard tripped at %s, so Anvil only warns until the drift policy is set to enforce again",
			nw.GuardTripped.UTC().Format(time.RFC3339)), record)
		return nw, d
	}
	if len(nw.Corrections) >= cfg.GuardMax {
		nw.GuardTripped = r.At
		nw.Reason = fmt.Sprintf("power drift: %s; the flap guard tripped after %d corrections in the last %s, "+
			"so Anvil only warns until the drift policy is set to enforce again", what, len(nw.Corrections), cfg.GuardWindow)
		d.Flag = true
		record(LevelWarning, "Power drift guard", fmt.Sprintf(
			"Power drift: %s, after %d corrections in the last %s. Anvil stops powering this machine %s and only warns, "+
				"in case someone wants it %s; set the drift policy to enforce again to resume",
			what, len(nw.Corrections), cfg.GuardWindow, expected, nw.Observed))
		return nw, d
	}
	d.Correct = PowerDown
	if expected == PowerOn {
		d.Correct = PowerUp
	}
	nw.Corrections = append(nw.Corrections, r.At)
	nw.Reason = fmt.Sprintf("power drift: %s; correcting (%d of %d corrections allowed per %s)",
		what, len(nw.Corrections), cfg.GuardMax, cfg.GuardWindow)
	verb := "Power drift"
	if !starts {
		verb = "Power drift persists"
	}
	record(LevelWarning, "Power drift", fmt.Sprintf("%s: %s; powering it %s (correction %d of %d allowed per %s)",
		verb, what, expected, len(nw.Corrections), cfg.GuardMax, cfg.GuardWindow))
	return nw, d
}

// warnDrift flags a drift Anvil does not correct, with one event when it
// starts.
func warnDrift(nw *PowerWatch, d *DriftDecision, starts bool, what, why string, record func(Level, string, string)) {
	d.Flag = true
	nw.Reason = "power drift: " + what + "; " + why
	if starts {
		record(LevelWarning, "Power drift", "Power drift: "+what+"; "+why)
	}
}

// inGrace reports whether now is within grace of the last ask or the last
// correction.
func inGrace(w PowerWatch, now time.Time, grace time.Duration) bool {
	last := w.LastAsk.At
	if n := len(w.Corrections); n > 0 && w.Corrections[n-1].After(last) {
		last = w.Corrections[n-1]
	}
	return !last.IsZero() && now.Before(last.Add(grace))
}

func readingError(r Reading) string {
	if r.Err != nil {
		return r.Err.Error()
	}
	if r.State == "" {
		return "the BMC returned no power state"
	}
	return fmt.Sprintf("the BMC reported power %s", r.State)
}

// ApplyDrift carries out the lifecycle part of a drift decision on m: when
// FailPhase is set and a phase is still in progress, it fails that phase
// (the Fail step records why). The outcome's Power is the correction to
// queue and its Events are the decision's, followed by the step's. Like
// Step, it never changes m.
func ApplyDrift(m Machine, d DriftDecision, now time.Time, cfg Config) Outcome {
	out := Outcome{Machine: m.Clone(), Power: d.Correct, Events: slices.Clone(d.Events)}
	if d.FailPhase != "" && m.Status.InProgress() {
		next, err := Step(m, Input{Action: Fail, Actor: SystemActor, Now: now, Comment: d.FailPhase}, cfg)
		if err == nil {
			next.Events = append(out.Events, next.Events...)
			next.Power = d.Correct
			return next
		}
	}
	if len(out.Events) > 0 || out.Power != PowerNone {
		out.Machine.Updated = now
	}
	return out
}
