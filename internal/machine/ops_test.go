package machine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// opCase is one operation on a fixture; err is the kind of refusal wanted
// (nil: it succeeds), msg MAAS's words for a Violation.
type opCase struct {
	name   string
	status Status
	setup  func(*Machine)
	in     Input
	err    any // nil, *Violation, *ForbiddenError or *InputError
	msg    string
	check  func(t *testing.T, out Outcome)
}

func locked(m *Machine) { m.Locked = true }

func TestOperations(t *testing.T) {
	cases := []opCase{
		{name: "owner locks deployed", status: Deployed, in: Input{Action: Lock, Actor: aliceActor, Comment: "prod"},
			check: func(t *testing.T, o Outcome) {
				if !o.Machine.Locked || len(o.Events) != 1 || o.Events[0].Description != "Locked by alice: prod" || o.Events[0].User != "alice" {
					t.Errorf("locked=%v events=%+v", o.Machine.Locked, o.Events)
				}
			}},
		{name: "admin locks deploying", status: Deploying, in: Input{Action: Lock, Actor: adminActor},
			check: func(t *testing.T, o Outcome) { wantLocked(t, o, true) }},
		{name: "lock twice", status: Deployed, setup: locked, in: Input{Action: Lock, Actor: aliceActor},
			err: &Violation{}, msg: "Machine is already locked"},
		{name: "lock ready", status: Ready, in: Input{Action: Lock, Actor: adminActor},
			err: &Violation{}, msg: "Can't lock, node is not deployed or deploying"},
		{name: "lock allocated", status: Allocated, in: Input{Action: Lock, Actor: aliceActor},
			err: &Violation{}, msg: "Can't lock, node is not deployed or deploying"},
		{name: "lock another's", status: Deployed, in: Input{Action: Lock, Actor: bobActor}, err: &ForbiddenError{}},
		{name: "owner unlocks", status: Deployed, setup: locked, in: Input{Action: Unlock, Actor: aliceActor, Comment: "maintenance"},
			check: func(t *testing.T, o Outcome) {
				wantLocked(t, o, false)
				if len(o.Events) != 1 || o.Events[0].Description != "Unlocked by alice: maintenance" {
					t.Errorf("events %+v", o.Events)
				}
			}},
		{name: "unlock unlocked", status: Deployed, in: Input{Action: Unlock, Actor: aliceActor},
			err: &Violation{}, msg: "Machine is not locked"},
		{name: "unlock another's", status: Deployed, setup: locked, in: Input{Action: Unlock, Actor: bobActor}, err: &ForbiddenError{}},
		{name: "locked failed deployment unlocks", status: FailedDeployment, setup: locked, in: Input{Action: Unlock, Actor: aliceActor},
			check: func(t *testing.T, o Outcome) { wantLocked(t, o, false) }},

		{name: "override to ready", status: FailedTesting, in: Input{Action: OverrideFailedTesting, Actor: adminActor},
			check: func(t *testing.T, o Outcome) { wantStatus(t, o, Ready) }},
		{name: "override to deployed", status: FailedTesting,
			setup: func(m *Machine) {
				m.Owner, m.OSystem, m.DistroSeries, m.PreviousStatus = "alice", "ubuntu", "noble", Deployed
			},
			in:    Input{Action: OverrideFailedTesting, Actor: adminActor},
			check: func(t *testing.T, o Outcome) { wantStatus(t, o, Deployed) }},
		{name: "override ready", status: Ready, in: Input{Action: OverrideFailedTesting, Actor: adminActor},
			err: &Violation{}, msg: "Unable to override node status. Node is not in 'Failed testing' status."},
		{name: "override by user", status: FailedTesting, in: Input{Action: OverrideFailedTesting, Actor: aliceActor}, err: &ForbiddenError{}},

		{name: "owner annotates", status: Deployed,
			setup: func(m *Machine) { m.OwnerData = map[string]string{"keep": "1", "drop": "x"} },
			in:    Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: map[string]string{"juju-model": "m1", "drop": ""}},
			check: func(t *testing.T, o Outcome) {
				if want := map[string]string{"keep": "1", "juju-model": "m1"}; !reflect.DeepEqual(o.Machine.OwnerData, want) {
					t.Errorf("owner data %v, want %v", o.Machine.OwnerData, want)
				}
			}},
		{name: "last key removed", status: Deployed,
			setup: func(m *Machine) { m.OwnerData = map[string]string{"a": "1"} },
			in:    Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: map[string]string{"a": ""}},
			check: func(t *testing.T, o Outcome) {
				if o.Machine.OwnerData != nil {
					t.Errorf("owner data %v, want none", o.Machine.OwnerData)
				}
			}},
		{name: "admin annotates another's", status: Deployed, in: Input{Action: SetWorkloadAnnotations, Actor: adminActor, Annotations: map[string]string{"a": "1"}},
			err: &Violation{}, msg: "Cannot set workload annotation: it hasn't been acquired."},
		{name: "annotate a free machine", status: Ready, in: Input{Action: SetWorkloadAnnotations, Actor: adminActor, Annotations: map[string]string{"a": "1"}},
			err: &Violation{}, msg: "Cannot set workload annotation: it hasn't been acquired."},
		{name: "annotate another's", status: Deployed, in: Input{Action: SetWorkloadAnnotations, Actor: bobActor, Annotations: map[string]string{"a": "1"}},
			err: &ForbiddenError{}},
		{name: "key too long", status: Deployed, in: Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: map[string]string{strings.Repeat("k", 256): "1"}},
			err: &InputError{}},
		{name: "value too long", status: Deployed, in: Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: map[string]string{"k": strings.Repeat("v", MaxAnnotationValue+1)}},
			err: &InputError{}},
		{name: "too many keys", status: Deployed, in: Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: manyKeys(MaxAnnotations + 1)},
			err: &InputError{}},
		{name: "locked refuses annotations", status: Deployed, setup: locked,
			in: Input{Action: SetWorkloadAnnotations, Actor: aliceActor, Annotations: map[string]string{"a": "1"}}, err: &ForbiddenError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fixture(c.status)
			if c.setup != nil {
				c.setup(&m)
			}
			before := deepCopy(m)
			c.in.Now = tNow
			out, err := Step(m, c.in, DefaultConfig())
			if !reflect.DeepEqual(withoutLifecycleFields(m), withoutLifecycleFields(before)) {
				t.Fatal("Step changed its input")
			}
			if c.err == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if c.check != nil {
					c.check(t, out)
				}
				return
			}
			if !sameKind(err, c.err) {
				t.Fatalf("error %v (%T), want a %T", err, err, c.err)
			}
			if c.msg != "" && err.Error() != c.msg {
				t.Fatalf("error %q, want MAAS's %q", err, c.msg)
			}
			if !reflect.DeepEqual(out, Outcome{}) {
				t.Fatalf("a refusal returned an outcome: %+v", out)
			}
		})
	}
}

func sameKind(err error, want any) bool {
	var (
		v *Violation
		f *ForbiddenError
		i *InputError
	)
	switch want.(type) {
	case *Violation:
		return errors.As(err, &v)
	case *ForbiddenError:
		return errors.As(err, &f) && errors.Is(err, ErrForbidden)
	case *InputError:
		return errors.As(err, &i)
	}
	return false
}

func wantLocked(t *testing.T, o Outcome, want bool) {
	t.Helper()
	if o.Machine.Locked != want {
		t.Errorf("locked = %v, want %v", o.Machine.Locked, want)
	}
}

func wantStatus(t *testing.T, o Outcome, want Status) {
	t.Helper()
	if o.Machine.Status != want {
		t.Errorf("status %s, want %s", o.Machine.Status, want)
	}
}

func manyKeys(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[strings.Repeat("k", 1+i%200)+string(rune('a'+i/200))] = "v"
	}
	return m
}

// A locked machine refuses every action a person asks for, whoever asks
// and whatever its status, and lets Anvil's own steps through exactly as
// on an unlocked machine.
func TestLockedRefusesPeople(t *testing.T) {
	cfg := DefaultConfig()
	for _, s := range AllStatuses {
		for _, a := range append(append([]Action(nil), UserActions...), OverrideFailedTesting) {
			for _, who := range []Actor{adminActor, aliceActor} {
				m := fixture(s)
				m.Locked = true
				_, err := Step(m, Input{Action: a, Actor: who, Now: tNow}, cfg)
				if !errors.Is(err, ErrForbidden) {
					t.Errorf("%s/%s by %s on a locked machine: %v, want forbidden", s.Key(), a, who.Name, err)
				} else if who.Admin && !strings.Contains(err.Error(), "locked") {
					t.Errorf("%s/%s: %q does not say the machine is locked", s.Key(), a, err)
				}
			}
		}
		for _, a := range SystemActions {
			m := fixture(s)
			want := stepTable[s][a]
			m.Locked = true
			out := stepAndCheck(t, m, Input{Action: a, Actor: SystemActor, Now: tNow}, cfg, want)
			if want.err == errNone && !out.Machine.Locked {
				t.Errorf("%s/%s unlocked the machine", s.Key(), a)
			}
		}
	}
}

func TestCheckUnlocked(t *testing.T) {
	m := fixture(Deployed)
	if err := CheckUnlocked(adminActor, &m, "update"); err != nil {
		t.Fatalf("unlocked: %v", err)
	}
	m.Locked = true
	for _, a := range []Actor{adminActor, aliceActor} {
		if err := CheckUnlocked(a, &m, "delete"); !errors.Is(err, ErrForbidden) || err.Error() != "not allowed to delete this machine: the machine is locked; unlock it first" {
			t.Errorf("%s: %v", a.Name, err)
		}
	}
	if err := CheckUnlocked(SystemActor, &m, "update"); err != nil {
		t.Errorf("system: %v", err)
	}
}

// Whatever way a machine becomes free again, its owner's annotations go.
func TestFreeMachineLosesOwnerData(t *testing.T) {
	for _, s := range []Status{Releasing, DiskErasing} {
		m := fixture(s)
		m.OwnerData = map[string]string{"a": "1"}
		out, err := Step(m, Input{Action: Succeed, Actor: SystemActor, Now: tNow}, DefaultConfig())
		if err != nil || out.Machine.Status != Ready || out.Machine.OwnerData != nil {
			t.Errorf("%s succeed: %v status %s owner data %v", s, err, out.Machine.Status, out.Machine.OwnerData)
		}
	}
	m := fixture(Broken)
	m.PreviousStatus, m.OwnerData = Allocated, map[string]string{"a": "1"}
	out, err := Step(m, Input{Action: MarkFixed, Actor: adminActor, Now: tNow}, DefaultConfig())
	if err != nil || out.Machine.Status != Ready || out.Machine.OwnerData != nil {
		t.Errorf("mark fixed: %v status %s owner data %v", err, out.Machine.Status, out.Machine.OwnerData)
	}
}

func TestCheckRestore(t *testing.T) {
	for _, what := range []Restore{RestoreNetworking, RestoreStorage, RestoreDefault} {
		for _, s := range AllStatuses {
			m := fixture(s)
			err := CheckRestore(adminActor, &m, what)
			if s == Ready || s == FailedTesting {
				if err != nil {
					t.Errorf("%s in %s: %v", what, s, err)
				}
				if err := CheckRestore(aliceActor, &m, what); !errors.Is(err, ErrForbidden) {
					t.Errorf("%s by a user: %v", what, err)
				}
				m.Locked = true
				if err := CheckRestore(adminActor, &m, what); !errors.Is(err, ErrForbidden) {
					t.Errorf("%s of a locked machine: %v", what, err)
				}
				continue
			}
			var v *Violation
			if !errors.As(err, &v) || v.Msg != restoreRefusal[what] || !strings.HasPrefix(v.Msg, "Machine must be in a ready or failed testing state to restore ") {
				t.Errorf("%s in %s: %v, want MAAS's refusal", what, s, err)
			}
		}
	}
	m := fixture(Ready)
	if err := CheckRestore(adminActor, &m, "everything"); err == nil {
		t.Error("an unknown restore was accepted")
	}
}
