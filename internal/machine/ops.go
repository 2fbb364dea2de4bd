package machine

import (
	"fmt"
	"unicode/utf8"
)

// Operations are MAAS's machine operations outside the lifecycle table:
// lock and unlock, overriding failed tests and the owner's annotations.
// Step takes them like actions; only override_failed_testing changes the
// status.
const (
	Lock                   Action = "lock"
	Unlock                 Action = "unlock"
	OverrideFailedTesting  Action = "override_failed_testing"
	SetWorkloadAnnotations Action = "set_workload_annotations"
)

// Operations lists them.
var Operations = []Action{Lock, Unlock, OverrideFailedTesting, SetWorkloadAnnotations}

// Limits on workload annotations: MAAS has none, but a store must not
// keep whatever a client sends.
const (
	MaxAnnotations     = 256
	MaxAnnotationKey   = 255 // MAAS's column
	MaxAnnotationValue = 16 << 10
)

// Violation is a request the machine's state refuses, in MAAS's words
// (its NodeStateViolation: 409).
type Violation struct{ Msg string }

func (v *Violation) Error() string { return v.Msg }

// InputError is a request parameter that is wrong (400, keyed by Field).
type InputError struct{ Field, Msg string }

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// CheckUnlocked refuses what a person asks of a locked machine, as MAAS
// refuses every edit and admin permission on one. Anvil's own steps (a
// deployment's end, a timeout, the drift policy) are not refused: the lock
// stops people changing a machine, not the machine finishing what it does.
func CheckUnlocked(a Actor, m *Machine, what Action) error {
	if !m.Locked || a.System {
		return nil
	}
	return &ForbiddenError{Action: what, Reason: "the machine is locked; unlock it first"}
}

// lock is MAAS's: only a Deployed or Deploying machine, once.
func (s *stepper) lock() error {
	if s.m.Locked {
		return &Violation{"Machine is already locked"}
	}
	if s.m.Status != Deployed && s.m.Status != Deploying {
		return &Violation{"Can't lock, node is not deployed or deploying"}
	}
	s.m.Locked = true
	s.record(LevelInfo, "Locked", s.by("Locked"))
	return nil
}

func (s *stepper) unlock() error {
	if !s.m.Locked {
		return &Violation{"Machine is not locked"}
	}
	s.m.Locked = false
	s.record(LevelInfo, "Unlocked", s.by("Unlocked"))
	return nil
}

// overrideFailedTesting puts a machine whose tests failed back where it
// can be used: Deployed when it still carries its deployment, else Ready,
// as MAAS decides by the machine's operating system.
func (s *stepper) overrideFailedTesting() error {
	if s.m.Status != FailedTesting {
		return &Violation{"Unable to override node status. Node is not in 'Failed testing' status."}
	}
	to := Ready
	if s.m.OSystem != "" && s.m.Owner != "" {
		to = Deployed
	}
	s.moveTo(to, "Failed tests overridden", s.by("Failed testing overridden"))
	return nil
}

// setWorkloadAnnotations merges the owner's key=value pairs; an empty
// value removes its key. Only the machine's owner sets them, not even an
// administrator for someone else's machine, as in MAAS.
func (s *stepper) setWorkloadAnnotations() error {
	if s.m.Owner == "" || s.m.Owner != s.in.Actor.Name {
		return &Violation{"Cannot set workload annotation: it hasn't been acquired."}
	}
	data, err := MergeAnnotations(s.m.OwnerData, s.in.Annotations)
	if err != nil {
		return err
	}
	s.m.OwnerData = data
	return nil
}

// MergeAnnotations is old with the pairs of in set, those with an empty
// value removed, checked as MAAS's API takes them: nil when none is left.
func MergeAnnotations(old, in map[string]string) (map[string]string, error) {
	data := cloneMap(old)
	if data == nil {
		data = map[string]string{}
	}
	for k, v := range in {
		if err := ValidateAnnotation(k, v); err != nil {
			return nil, err
		}
		if v == "" {
			delete(data, k)
		} else {
			data[k] = v
		}
	}
	if len(data) > MaxAnnotations {
		return nil, &InputError{Field: "__all__", Msg: fmt.Sprintf("a node holds at most %d workload annotations; this would leave %d", MaxAnnotations, len(data))}
	}
	if len(data) == 0 {
		data = nil
	}
	return data, nil
}

// ValidateAnnotation checks one key and value of the owner's annotations.
func ValidateAnnotation(k, v string) error {
	switch {
	case k == "":
		return &InputError{Field: "__all__", Msg: "an annotation needs a key"}
	case len(k) > MaxAnnotationKey || !utf8.ValidString(k):
		return &InputError{Field: truncateKey(k), Msg: fmt.Sprintf("a key is at most %d bytes of UTF-8", MaxAnnotationKey)}
	case len(v) > MaxAnnotationValue || !utf8.ValidString(v):
		return &InputError{Field: k, Msg: fmt.Sprintf("a value is at most %d bytes of UTF-8", MaxAnnotationValue)}
	}
	return nil
}

func truncateKey(k string) string {
	if len(k) > 64 {
		k = k[:64]
	}
	return k
}

// Restore is what a restore_*_configuration operation resets.
type Restore string

const (
	RestoreNetworking Restore = "networking"
	RestoreStorage    Restore = "storage"
	RestoreDefault    Restore = "default"
)

// restoreRefusal is MAAS's text for each, word for word (its full stops
// included).
var restoreRefusal = map[Restore]string{
	RestoreNetworking: "Machine must be in a ready or failed testing state to restore networking configuration",
	RestoreStorage:    "Machine must be in a ready or failed testing state to restore storage configuration.",
	RestoreDefault:    "Machine must be in a ready or failed testing state to restore default networking and storage configuration.",
}

// CheckRestore says whether a restore may run: administrators only, on an
// unlocked machine in Ready or Failed testing, as MAAS checks.
func CheckRestore(a Actor, m *Machine, what Restore) error {
	action := Action("restore_" + string(what) + "_configuration")
	msg, ok := restoreRefusal[what]
	switch {
	case !ok:
		return fmt.Errorf("unknown configuration %q", what)
	case !a.Admin && !a.System:
		return &ForbiddenError{Action: action, Reason: "an administrator must do this"}
	}
	if err := CheckUnlocked(a, m, action); err != nil {
		return err
	}
	if m.Status != Ready && m.Status != FailedTesting {
		return &Violation{msg}
	}
	return nil
}
