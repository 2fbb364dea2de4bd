package machine

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Shared fixtures and checks for the table-driven tests in this package.

// t0 is when fixtures were last touched; tNow is when the tests act.
var (
	t0   = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	tNow = t0.Add(time.Hour)
)

// Short names for power intents, to keep the tables narrow.
const (
	pNone  = PowerNone
	pOn    = PowerUp
	pOff   = PowerDown
	pCycle = PowerRestart
)

// Actors used throughout.
var (
	adminActor = Actor{Name: "admin", Admin: true}
	aliceActor = Actor{Name: "alice"} // owns the fixtures that have an owner
	bobActor   = Actor{Name: "bob"}   // owns nothing
)

// allActions is every action Step knows, user actions then system ones.
var allActions = append(append([]Action(nil), UserActions...), SystemActions...)

// fixtureSetup is how each status's fixture came to be: who owns it and
// where it was before its current status (as Step itself would have left it).
var fixtureSetup = map[Status]struct {
	owner string
	prev  Status
}{
	New:                      {"", New},
	Commissioning:            {"", New},
	FailedCommissioning:      {"", New},
	Missing:                  {"", Ready},
	Ready:                    {"", Commissioning},
	Reserved:                 {"alice", Ready},
	Deployed:                 {"alice", Allocated},
	Retired:                  {"", Ready},
	Broken:                   {"alice", Deployed},
	Deploying:                {"alice", Allocated},
	Allocated:                {"alice", Ready},
	FailedDeployment:         {"alice", Allocated},
	Releasing:                {"alice", Deployed},
	FailedReleasing:          {"alice", Deployed},
	DiskErasing:              {"alice", Deployed},
	FailedDiskErasing:        {"alice", Deployed},
	RescueMode:               {"alice", Deployed},
	EnteringRescueMode:       {"alice", Deployed},
	FailedEnteringRescueMode: {"alice", Deployed},
	ExitingRescueMode:        {"alice", Deployed},
	FailedExitingRescueMode:  {"alice", Deployed},
	Testing:                  {"", Ready},
	FailedTesting:            {"", Ready},
}

// fixture returns a fully populated machine in status s. Monitored statuses
// carry a deadline in the future of tNow; the others carry none.
func fixture(s Status) Machine {
	setup, ok := fixtureSetup[s]
	if !ok {
		panic("no fixture for " + s.String())
	}
	m := Machine{
		SystemID:       "x7ykqe",
		Hostname:       "node-01",
		Domain:         "maas",
		Architecture:   "amd64/generic",
		Description:    "rack A, slot 3",
		Status:         s,
		StatusMessage:  "fixture",
		PreviousStatus: setup.prev,
		Owner:          setup.owner,
		Zone:           "default",
		Pool:           "default",
		PowerType:      "ipmi",
		PowerParams:    map[string]string{"power_address": "10.0.0.5", "power_user": "root", "power_pass": "s3cret"},
		PowerState:     PowerOn,
		Interfaces: []Interface{
			{ID: 1, Name: "eno1", MAC: "52:54:00:aa:bb:01", Boot: true},
			{ID: 2, Name: "eno2", MAC: "52:54:00:aa:bb:02"},
		},
		CPUCount:     8,
		Memory:       16384,
		Storage:      512000,
		HardwareUUID: "4c4c4544-0042-3510-8052-b4c04f4a4e32",
		Netboot:      true,
		Tags:         []string{"gpu", "rack-a"},
		Created:      t0.Add(-24 * time.Hour),
		Updated:      t0,
		Version:      7,
	}
	if s.Monitored() {
		m.StatusExpires = tNow.Add(5 * time.Minute)
	}
	if setup.owner != "" && s != Allocated && s != Reserved {
		m.OSystem, m.DistroSeries = "ubuntu", "jammy"
	}
	if s == DiskErasing || s == FailedDiskErasing {
		m.EraseMode = EraseQuick
	}
	return m
}

// deepCopy copies a machine without using the code under test (Clone).
func deepCopy(m Machine) Machine {
	c := m
	if m.Interfaces != nil {
		c.Interfaces = make([]Interface, len(m.Interfaces))
		copy(c.Interfaces, m.Interfaces)
	}
	if m.Tags != nil {
		c.Tags = make([]string, len(m.Tags))
		copy(c.Tags, m.Tags)
	}
	if m.PowerParams != nil {
		c.PowerParams = make(map[string]string, len(m.PowerParams))
		for k, v := range m.PowerParams {
			c.PowerParams[k] = v
		}
	}
	return c
}

// errKind is the kind of error an expectation names.
type errKind int

const (
	errNone errKind = iota
	errTransition
	errForbidden
)

func (k errKind) String() string {
	return [...]string{"no error", "TransitionError", "ForbiddenError"}[k]
}

// kindOf classifies an error returned by Step.
func kindOf(err error) (errKind, bool) {
	var te *TransitionError
	var fe *ForbiddenError
	switch {
	case err == nil:
		return errNone, true
	case errors.As(err, &te):
		return errTransition, true
	case errors.As(err, &fe):
		return errForbidden, true
	}
	return 0, false
}

// expect is one cell of a step table: an error kind, or where the machine
// ends up and what power must do. via lists the statuses a compound step
// passes through on the way (deploy of a Ready machine allocates first).
type expect struct {
	err   errKind
	to    Status
	power PowerAction
	via   []Status
}

func (e expect) String() string {
	if e.err != errNone {
		return e.err.String()
	}
	s := e.to.String() + " power=" + string(e.power)
	if e.power == PowerNone {
		s = e.to.String() + " power=none"
	}
	if len(e.via) > 0 {
		s += " via " + statusList(e.via)
	}
	return s
}

func statusList(ss []Status) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

var (
	refused   = expect{err: errTransition}
	forbidden = expect{err: errForbidden}
)

func goes(to Status, p PowerAction) expect { return expect{to: to, power: p} }

func goesVia(to Status, p PowerAction, via ...Status) expect {
	return expect{to: to, power: p, via: via}
}

// checkStep compares Step's answer with an expectation and, when the step
// succeeded, checks every invariant a successful step must keep.
func checkStep(t *testing.T, before Machine, in Input, cfg Config, out Outcome, err error, want expect) {
	t.Helper()
	kind, known := kindOf(err)
	if !known {
		t.Fatalf("Step returned an error of unexpected type %T: %v", err, err)
	}
	if kind != want.err {
		t.Fatalf("Step(%s, %s by %+v): got %v (err=%v, status=%s), want %v",
			before.Status, in.Action, in.Actor, kind, err, out.Machine.Status, want)
	}
	if err != nil {
		checkError(t, before, in, out, err)
		return
	}
	if got := out.Machine.Status; got != want.to {
		t.Errorf("status: got %s, want %s", got, want.to)
	}
	if out.Power != want.power {
		t.Errorf("power: got %q, want %q", out.Power, want.power)
	}
	checkInvariants(t, before, in, cfg, out, want.via)
}

// checkError checks what every refused step must look like.
func checkError(t *testing.T, before Machine, in Input, out Outcome, err error) {
	t.Helper()
	if !reflect.DeepEqual(out, Outcome{}) {
		t.Errorf("refused step returned a non-empty Outcome: %+v", out)
	}
	var te *TransitionError
	if errors.As(err, &te) {
		if te.Action != in.Action || te.Status != before.Status {
			t.Errorf("TransitionError names %s/%s, want %s/%s", te.Action, te.Status, in.Action, before.Status)
		}
	}
	var fe *ForbiddenError
	if errors.As(err, &fe) {
		if !errors.Is(err, ErrForbidden) {
			t.Errorf("ForbiddenError does not unwrap to ErrForbidden")
		}
		if fe.Action != in.Action {
			t.Errorf("ForbiddenError.Action = %q, want %q (message %q)", fe.Action, in.Action, err.Error())
		}
		if fe.Reason == "" {
			t.Errorf("ForbiddenError without a reason")
		}
	}
	if !strings.Contains(err.Error(), string(in.Action)) {
		t.Errorf("error %q does not name the action %q", err, in.Action)
	}
}

// withoutLifecycleFields blanks the only fields a Step may change, so that
// what remains can be compared: everything else belongs to other code.
func withoutLifecycleFields(m Machine) Machine {
	m.Status, m.StatusMessage, m.PreviousStatus, m.StatusExpires = 0, "", 0, time.Time{}
	m.Owner, m.OSystem, m.DistroSeries, m.EraseMode, m.Updated = "", "", "", "", time.Time{}
	// A deployment's settings: its user data, its hostname, and whether
	// the machine still network-boots the installer.
	m.UserData, m.Netboot, m.Hostname = nil, false, ""
	return m
}

// checkInvariants holds for every successful step.
func checkInvariants(t *testing.T, before Machine, in Input, cfg Config, out Outcome, via []Status) {
	t.Helper()
	after := out.Machine

	// The transition is one MAAS's table allows, hop by hop.
	path := append(append([]Status{before.Status}, via...), after.Status)
	for i := 1; i < len(path); i++ {
		from, to := path[i-1], path[i]
		if from != to && !CanTransition(from, to) {
			t.Errorf("%s → %s is not allowed by the transition table", from, to)
		}
	}
	changes := 0
	for i := 1; i < len(path); i++ {
		if path[i] != path[i-1] {
			changes++
		}
	}
	if got := out.Changed(before.Status); got != (after.Status != before.Status) {
		t.Errorf("Changed() = %v", got)
	}

	// The deadline: armed on entering (or heartbeating in) a monitored
	// status, cleared in any other, untouched otherwise.
	switch {
	case after.Status != before.Status || in.Action == Heartbeat || in.Action == Installed:
		want := time.Time{}
		if after.Status.Monitored() {
			want = in.Now.Add(cfg.TimeoutFor(after.Status))
		}
		if !after.StatusExpires.Equal(want) {
			t.Errorf("StatusExpires = %v, want %v (status %s)", after.StatusExpires, want, after.Status)
		}
	default:
		if !after.StatusExpires.Equal(before.StatusExpires) {
			t.Errorf("StatusExpires changed from %v to %v without a status change", before.StatusExpires, after.StatusExpires)
		}
	}
	if !after.Status.Monitored() && !after.StatusExpires.IsZero() {
		t.Errorf("non-monitored status %s has a deadline %v", after.Status, after.StatusExpires)
	}

	// Events: at least one per status change, each naming the machine,
	// the actor and the time.
	if len(out.Events) < changes {
		t.Errorf("%d status change(s) but %d event(s)", changes, len(out.Events))
	}
	for i, ev := range out.Events {
		if ev.SystemID != before.SystemID || ev.Hostname != before.Hostname {
			t.Errorf("event %d names %s/%s, want %s/%s", i, ev.SystemID, ev.Hostname, before.SystemID, before.Hostname)
		}
		if ev.User != in.Actor.Name {
			t.Errorf("event %d user = %q, want %q", i, ev.User, in.Actor.Name)
		}
		if !ev.Created.Equal(in.Now) {
			t.Errorf("event %d created %v, want %v", i, ev.Created, in.Now)
		}
		if ev.Type == "" || ev.Description == "" || ev.Level.Rank() == 0 {
			t.Errorf("event %d is incomplete: %+v", i, ev)
		}
		if ev.ID != 0 {
			t.Errorf("event %d has ID %d; stores assign IDs", i, ev.ID)
		}
	}
	if changes > 0 && after.StatusMessage == "" {
		t.Errorf("status changed but StatusMessage is empty")
	}
	if in.Action == Fail && (len(out.Events) == 0 || out.Events[len(out.Events)-1].Level != LevelError) {
		t.Errorf("a failure must be recorded at level ERROR: %+v", out.Events)
	}

	// Updated moves with every recorded change. A heartbeat records
	// nothing, so it leaves Updated alone.
	wantUpdated := in.Now
	if in.Action == Heartbeat {
		wantUpdated = before.Updated
	}
	if !after.Updated.Equal(wantUpdated) {
		t.Errorf("Updated = %v, want %v", after.Updated, wantUpdated)
	}

	// Nothing outside the lifecycle fields changes; Version belongs to
	// the store.
	if a, b := withoutLifecycleFields(deepCopy(after)), withoutLifecycleFields(deepCopy(before)); !reflect.DeepEqual(a, b) {
		t.Errorf("a step changed fields outside the lifecycle:\n got %+v\nwant %+v", a, b)
	}

	// A Ready machine is in the free pool.
	if after.Status == Ready && after.Owner != "" {
		t.Errorf("machine is Ready but still owned by %q", after.Owner)
	}
	// Only a release or an allocation changes the owner.
	if after.Owner != before.Owner {
		switch {
		case in.Action == Allocate || in.Action == Deploy:
			if before.Owner != "" || after.Owner != in.Actor.Name {
				t.Errorf("owner %q → %q by %s", before.Owner, after.Owner, in.Actor.Name)
			}
		case after.Status == Ready:
		case in.Action == EnterRescue:
			// An unowned machine is lent to the rescuer, as MAAS does.
			if before.Owner != "" || after.Owner != in.Actor.Name {
				t.Errorf("owner %q → %q by %s", before.Owner, after.Owner, in.Actor.Name)
			}
		case before.Status == ExitingRescueMode && ownerless(after.Status) && after.Owner == "":
		default:
			t.Errorf("owner changed %q → %q on %s", before.Owner, after.Owner, in.Action)
		}
	}
}

// stepAndCheck runs one step on a copy of m, checks that m was not mutated
// and that the outcome does not alias it, and returns the outcome.
func stepAndCheck(t *testing.T, m Machine, in Input, cfg Config, want expect) Outcome {
	t.Helper()
	snapshot := deepCopy(m)
	out, err := Step(m, in, cfg)
	if !reflect.DeepEqual(m, snapshot) {
		t.Fatalf("Step mutated its input:\n got %+v\nwant %+v", m, snapshot)
	}
	checkStep(t, m, in, cfg, out, err, want)
	if err == nil {
		checkNoAliasing(t, m, out.Machine)
	}
	return out
}

// checkNoAliasing scribbles over the outcome's slices and maps and checks
// that the input did not change with them.
func checkNoAliasing(t *testing.T, in, out Machine) {
	t.Helper()
	snapshot := deepCopy(in)
	if len(out.Interfaces) > 0 {
		out.Interfaces[0].MAC = "ff:ff:ff:ff:ff:ff"
	}
	if len(out.Tags) > 0 {
		out.Tags[0] = "scribbled"
	}
	if out.PowerParams != nil {
		out.PowerParams["power_pass"] = "scribbled"
		out.PowerParams["new_key"] = "scribbled"
	}
	if !reflect.DeepEqual(in, snapshot) {
		t.Errorf("the outcome's slices or maps alias the input")
	}
}
