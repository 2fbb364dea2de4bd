package machine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The known-machine check: a booted environment says who it is, the region
// finds the candidates (by MAC, by SMBIOS UUID, by BMC), Identify decides
// which machine that is, and Greet decides what the machine does next.
// Both are pure; the region does the finding, storing and power work.

// HelloAnswer is the only thing a booted environment is told.
type HelloAnswer string

const (
	AnswerEnlist   HelloAnswer = "enlist"
	AnswerReboot   HelloAnswer = "reboot"
	AnswerPowerOff HelloAnswer = "poweroff"
	AnswerProceed  HelloAnswer = "proceed"
)

// MaxWrongBoots is the loop guard: this many boots in a row into the wrong
// environment fail the phase instead of rebooting again.
const MaxWrongBoots = 3

// Hello is what a booted environment reported.
type Hello struct {
	Booted BootPurpose // what it booted: enlist, ephemeral or install
	MACs   []string    // normalised
	UUID   string
	BMC    *BMCInfo
	// EnrolOK says the one-time secret it booted with is the machine's
	// current one: proof that it got the machine's own boot.
	EnrolOK bool
	// Witness is what corroborates the hello beyond its own word.
	Witness Witness
	Now     time.Time
}

// Candidates are the machines the region found for a Hello.
type Candidates struct {
	ByMAC, ByUUID, ByBMC []Machine
}

// Identification is Identify's verdict.
type Identification struct {
	// Machine is the machine it is; nil when unknown or held.
	Machine *Machine
	// Held, when set, says why the environment was not matched although
	// it matched something: it is told to power off and nothing merges.
	Held string
	// HeldIDs are the machines concerned, to record the reason on.
	HeldIDs []string
	// Why is Held without names or IDs, for the anonymous answer.
	Why string
	// AwaitedBoot says the machine was added by BMC alone and this is the
	// unknown boot Anvil was waiting for.
	AwaitedBoot bool
	// NewMACs are reported MACs the machine does not have yet.
	NewMACs []string
}

// Identify decides which machine a Hello comes from. A match by any
// identity counts; matches that disagree are held, not merged.
func Identify(c Candidates, h Hello) Identification {
	type hit struct {
		m   Machine
		how []string
	}
	var hits []*hit
	add := func(ms []Machine, how string) {
		for _, m := range ms {
			i := slices.IndexFunc(hits, func(x *hit) bool { return x.m.SystemID == m.SystemID })
			if i < 0 {
				hits = append(hits, &hit{m: m})
				i = len(hits) - 1
			}
			if !slices.Contains(hits[i].how, how) {
				hits[i].how = append(hits[i].how, how)
			}
		}
	}
	add(c.ByMAC, "MAC")
	if UsableUUID(h.UUID) {
		add(c.ByUUID, "UUID")
	}
	if h.BMC != nil && h.BMC.Address != "" {
		add(c.ByBMC, "BMC "+h.BMC.Address)
	}
	switch len(hits) {
	case 0:
		return Identification{}
	case 1:
	default:
		var parts, ids []string
		for _, x := range hits {
			parts = append(parts, fmt.Sprintf("%s (%s) by %s", x.m.SystemID, x.m.Hostname, strings.Join(x.how, ", ")))
			ids = append(ids, x.m.SystemID)
		}
		return Identification{Held: "matches more than one machine: " + strings.Join(parts, "; "), HeldIDs: ids, Why: "it matches more than one machine"}
	}
	m, how := hits[0].m, hits[0].how
	held := func(why, reason string) Identification {
		return Identification{Held: reason, HeldIDs: []string{m.SystemID}, Why: why}
	}
	sharesMAC := false
	var newMACs []string
	for _, mac := range h.MACs {
		if slices.ContainsFunc(m.Interfaces, func(i Interface) bool { return i.MAC == mac }) {
			sharesMAC = true
		} else {
			newMACs = append(newMACs, mac)
		}
	}
	if h.BMC != nil && h.BMC.Address != "" {
		if host := BMCHost(m.BMCIdentity); host != "" && host != h.BMC.Address {
			return held("its BMC contradicts its MACs", fmt.Sprintf("its BMC is %s but machine %s (%s), matched by %s, is behind BMC %s",
				h.BMC.Address, m.SystemID, m.Hostname, strings.Join(how, ", "), host))
		}
	}
	if len(m.Interfaces) > 0 && !sharesMAC {
		return held("its MACs contradict its other identities", fmt.Sprintf("matched machine %s (%s) by %s, but none of its MACs (%s) are that machine's",
			m.SystemID, m.Hostname, strings.Join(how, ", "), strings.Join(h.MACs, ", ")))
	}
	return Identification{Machine: &m, AwaitedBoot: len(m.Interfaces) == 0, NewMACs: newMACs}
}

// UsableUUID says whether an SMBIOS UUID identifies anything: firmware
// often leaves it blank, all zeros, all ones or a vendor placeholder.
func UsableUUID(u string) bool {
	switch strings.ToLower(u) {
	case "", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"03000200-0400-0500-0006-000700080009":
		return false
	}
	return true
}

// BMCHost is the host part of a BMC identity ("type|host|port|system").
func BMCHost(identity string) string {
	parts := strings.Split(identity, "|")
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// HelloOutcome is Greet's decision.
type HelloOutcome struct {
	Machine Machine
	Answer  HelloAnswer
	// Phase is what to go on with, with AnswerProceed.
	Phase string
	// Power is PowerRestart when the BMC should reboot the machine into
	// the right boot (network boot-once, then cycle).
	Power  PowerAction
	Events []Event
	// Trusted says the hello is the machine's own boot (its enrolment
	// secret, a boot a rack saw from one of its MACs, or the corroborated
	// awaited boot): only then may what it reports (MACs, UUID) be
	// learned.
	Trusted bool
	// Held, when set, says why the awaited boot of a machine added by its
	// BMC alone was not taken: it waits for an administrator to accept it.
	Held string
}

// PhaseOf names the work the environment does in a status, "" when none.
func PhaseOf(s Status) string {
	switch s {
	case Commissioning:
		return "commissioning"
	case Testing:
		return "testing"
	case Deploying:
		return "deploying"
	case DiskErasing:
		return "disk_erasing"
	case EnteringRescueMode, RescueMode:
		return "rescue"
	case Releasing:
		return "releasing"
	}
	return ""
}

// Greet decides what a known machine that booted an environment does
// next. awaited says this is the unknown boot of a machine added by BMC
// alone, which is right although it carries no enrolment secret.
func Greet(m Machine, h Hello, awaited bool, cfg Config) HelloOutcome {
	m = m.Clone()
	o := HelloOutcome{Machine: m}
	ev := func(level Level, typ, text string) {
		o.Events = append(o.Events, Event{
			SystemID: m.SystemID, Hostname: m.Hostname, Type: typ, Level: level, Description: text, Created: h.Now,
		})
	}
	want := BootPurposeOf(&m)
	booted := h.Booted
	if booted == "" {
		booted = BootEnlist
	}
	if !awaited {
		o.Trusted, _ = Sighted(m, h)
		o.Trusted = o.Trusted || h.EnrolOK
	}
	switch {
	case m.Status == New:
		o.Answer = AnswerPowerOff
		ev(LevelInfo, "Known machine", fmt.Sprintf("Booted the %s environment while New: known, told to power off", booted))
	case want == BootEphemeral || want == BootInstall:
		phase := PhaseFor(&m)
		how := "with its own boot"
		ok := booted == want && h.EnrolOK
		if awaited && !ok {
			var why string
			if ok, why = AwaitedBootOK(m, h); !ok {
				o.Answer, o.Held = AnswerPowerOff, why
				ev(LevelWarning, "Enlistment held", fmt.Sprintf("A boot found by its BMC alone was held for an administrator to accept (op=accept): %s", why))
				return o
			}
			how = "found by its BMC, after Anvil powered it on, and seen by the rack"
			if len(h.Witness.GUIDs) > 0 {
				how += ", with the system GUID its BMC gives"
			}
		}
		if ok {
			o.Answer, o.Phase, o.Trusted = AnswerProceed, phase, true
			o.Machine.WrongBoots = 0
			if d := cfg.TimeoutFor(m.Status); d > 0 {
				o.Machine.StatusExpires = h.Now.Add(d)
			}
			ev(LevelInfo, "Environment checked in", fmt.Sprintf("The %s environment checked in %s: proceeding with %s", booted, how, phase))
			return o
		}
		why := fmt.Sprintf("booted the %s environment instead of %s", booted, want)
		if booted == want {
			why = fmt.Sprintf("booted the %s environment without a valid enrolment secret", booted)
		}
		if seen, unseen := Sighted(m, h); !seen {
			// Anyone can say this: it moves nothing.
			o.Answer = AnswerPowerOff
			ev(LevelWarning, "Uncorroborated boot", fmt.Sprintf("A hello said this machine %s, but %s: told to power off; no reboot, not counted as a wrong boot", why, unseen))
			return o
		}
		o.Trusted = true
		o.Machine.WrongBoots++
		if o.Machine.WrongBoots >= MaxWrongBoots {
			reason := fmt.Sprintf("%d wrong boots in a row (last: %s)", o.Machine.WrongBoots, why)
			o.Machine.WrongBoots = 0
			if to, ok := m.Status.FailedTwin(); ok {
				o.Machine.PreviousStatus = m.Status
				o.Machine.Status, o.Machine.StatusExpires = to, time.Time{}
				o.Machine.StatusMessage = m.Status.String() + " failed: " + reason
				ev(LevelError, "Failed", o.Machine.StatusMessage)
			}
			o.Answer = AnswerPowerOff
			return o
		}
		o.Answer, o.Power = AnswerReboot, PowerRestart
		o.Machine.StatusMessage = fmt.Sprintf("Wrong boot %d of %d: %s", o.Machine.WrongBoots, MaxWrongBoots, why)
		ev(LevelWarning, "Wrong boot", fmt.Sprintf("While %s the machine %s: told to reboot; its next boot is set to %s (wrong boot %d of %d)",
			m.Status, why, want, o.Machine.WrongBoots, MaxWrongBoots))
	case want == BootLocal:
		o.Answer = AnswerReboot
		if !o.Trusted {
			// The environment reboots itself; an anonymous hello neither
			// counts nor stops anything.
			ev(LevelWarning, "Wrong boot", fmt.Sprintf("While %s the machine booted the %s environment: told to reboot to its disk (uncorroborated, not counted)", m.Status, booted))
			return o
		}
		o.Machine.WrongBoots++
		if o.Machine.WrongBoots > MaxWrongBoots {
			// Keep the count, so every further fall-through is stopped at
			// once until the status changes (release, redeploy).
			o.Machine.WrongBoots = MaxWrongBoots
		}
		if o.Machine.WrongBoots >= MaxWrongBoots {
			o.Answer = AnswerPowerOff
			o.Machine.StatusMessage = fmt.Sprintf("Boot loop: %d boots in a row reached the %s environment instead of its disk; "+
				"told to power off, not rebooted again (its disk does not boot, or the firmware skips it)", o.Machine.WrongBoots, booted)
			ev(LevelError, "Boot loop", fmt.Sprintf("While %s: %s", m.Status, o.Machine.StatusMessage))
			return o
		}
		ev(LevelWarning, "Wrong boot", fmt.Sprintf("While %s the machine booted the %s environment: told to reboot to its disk (wrong boot %d of %d)",
			m.Status, booted, o.Machine.WrongBoots, MaxWrongBoots))
	default:
		o.Answer = AnswerPowerOff
		ev(LevelInfo, "Known machine", fmt.Sprintf("Booted the %s environment while %s: known, told to power off", booted, m.Status))
	}
	return o
}
