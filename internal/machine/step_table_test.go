package machine

import (
	"fmt"
	"strings"
	"testing"
)

// stepTable is the expected answer of Step for every status × every action,
// on the fixture for that status (see fixtureSetup), with an admin asking
// for user actions and Anvil itself (SystemActor) for system actions.
//
// It is written out by hand, cell by cell: a change in lifecycle behaviour
// must show up here as a failing cell, and be re-decided on purpose.
var stepTable = map[Status]map[Action]expect{
	New: {
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           refused, // Anvil's table has no New → Testing (newer MAAS does)
		PowerOnAction:  goes(New, pOn),
		PowerOffAction: goes(New, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Commissioning: {
		Commission:     refused,
		Abort:          goes(New, pOff), // back to PreviousStatus
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(Commissioning, pOn),
		PowerOffAction: goes(Commissioning, pOff),
		Succeed:        goes(Ready, pOff),
		Fail:           goes(FailedCommissioning, pNone),
		Heartbeat:      goes(Commissioning, pNone),
		Installed:      refused,
	},
	FailedCommissioning: {
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedCommissioning, pOn),
		PowerOffAction: goes(FailedCommissioning, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Missing: {
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Missing, pOn),
		PowerOffAction: goes(Missing, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Ready: {
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       goes(Allocated, pNone),
		Deploy:         goesVia(Deploying, pCycle, Allocated), // allocates to the caller on the way
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Ready, pOn),
		PowerOffAction: goes(Ready, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Reserved: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Reserved, pOn),
		PowerOffAction: goes(Reserved, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Deployed: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Deployed, pOn),
		PowerOffAction: goes(Deployed, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Retired: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Retired, pOn),
		PowerOffAction: goes(Retired, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Broken: { // owned by alice, broken while Deployed
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     refused,
		MarkFixed:      goes(Deployed, pNone),
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Broken, pOn),
		PowerOffAction: goes(Broken, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Deploying: {
		Commission:     refused,
		Abort:          goes(Allocated, pOff),
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(Deploying, pOn),
		PowerOffAction: goes(Deploying, pOff),
		Succeed:        goes(Deployed, pNone),
		Fail:           goes(FailedDeployment, pNone),
		Heartbeat:      goes(Deploying, pNone),
		Installed:      goes(Deploying, pCycle),
	},
	Allocated: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         goes(Deploying, pCycle),
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(Allocated, pOn),
		PowerOffAction: goes(Allocated, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	FailedDeployment: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedDeployment, pOn),
		PowerOffAction: goes(FailedDeployment, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Releasing: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(Releasing, pOn),
		PowerOffAction: goes(Releasing, pOff),
		Succeed:        goes(Ready, pOff),
		Fail:           goes(FailedReleasing, pNone),
		Heartbeat:      goes(Releasing, pNone),
		Installed:      refused,
	},
	FailedReleasing: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedReleasing, pOn),
		PowerOffAction: goes(FailedReleasing, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	DiskErasing: {
		Commission:     refused,
		Abort:          goes(FailedDiskErasing, pOff),
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(DiskErasing, pOn),
		PowerOffAction: goes(DiskErasing, pOff),
		Succeed:        goes(Ready, pOff),
		Fail:           goes(FailedDiskErasing, pNone),
		Heartbeat:      goes(DiskErasing, pNone),
		Installed:      refused,
	},
	FailedDiskErasing: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        goes(Releasing, pOff),
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedDiskErasing, pOn),
		PowerOffAction: goes(FailedDiskErasing, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	RescueMode: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     goes(ExitingRescueMode, pCycle), // was Deployed: boot its disk again
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(RescueMode, pOn),
		PowerOffAction: goes(RescueMode, pOff),
		Succeed:        goes(RescueMode, pNone), // the environment is up again after a reboot
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	EnteringRescueMode: {
		Commission:     refused,
		Abort:          goes(Deployed, pOff), // back to PreviousStatus
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     goes(ExitingRescueMode, pCycle), // MAAS lets an exit overtake the entry
		Test:           refused,
		PowerOnAction:  goes(EnteringRescueMode, pOn),
		PowerOffAction: goes(EnteringRescueMode, pOff),
		Succeed:        goes(RescueMode, pNone),
		Fail:           goes(FailedEnteringRescueMode, pNone),
		Heartbeat:      goes(EnteringRescueMode, pNone),
		Installed:      refused,
	},
	FailedEnteringRescueMode: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     goes(ExitingRescueMode, pCycle),
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedEnteringRescueMode, pOn),
		PowerOffAction: goes(FailedEnteringRescueMode, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	ExitingRescueMode: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(ExitingRescueMode, pOn),
		PowerOffAction: goes(ExitingRescueMode, pOff),
		Succeed:        goes(Deployed, pNone), // back to PreviousStatus
		Fail:           goes(FailedExitingRescueMode, pNone),
		Heartbeat:      goes(ExitingRescueMode, pNone),
		Installed:      refused,
	},
	FailedExitingRescueMode: {
		Commission:     refused,
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused, // MAAS's table has no FailedExitingRescueMode → EnteringRescueMode
		ExitRescue:     goes(ExitingRescueMode, pCycle),
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedExitingRescueMode, pOn),
		PowerOffAction: goes(FailedExitingRescueMode, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
	Testing: {
		Commission:     goes(Commissioning, pCycle), // the table allows Testing → Commissioning
		Abort:          goes(Ready, pOff),
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    refused,
		ExitRescue:     refused,
		Test:           refused,
		PowerOnAction:  goes(Testing, pOn),
		PowerOffAction: goes(Testing, pOff),
		Succeed:        goes(Ready, pOff),
		Fail:           goes(FailedTesting, pNone),
		Heartbeat:      goes(Testing, pNone),
		Installed:      refused,
	},
	FailedTesting: {
		Commission:     goes(Commissioning, pCycle),
		Abort:          refused,
		Allocate:       refused,
		Deploy:         refused,
		Release:        refused,
		MarkBroken:     goes(Broken, pNone),
		MarkFixed:      refused,
		EnterRescue:    goes(EnteringRescueMode, pCycle),
		ExitRescue:     refused,
		Test:           goes(Testing, pCycle),
		PowerOnAction:  goes(FailedTesting, pOn),
		PowerOffAction: goes(FailedTesting, pOff),
		Succeed:        refused,
		Fail:           refused,
		Heartbeat:      refused,
		Installed:      refused,
	},
}

// actorFor is who asks in the main table: an admin for user actions, Anvil
// itself for system actions.
func actorFor(a Action) Actor {
	for _, s := range SystemActions {
		if s == a {
			return SystemActor
		}
	}
	return adminActor
}

func TestStepTableIsComplete(t *testing.T) {
	if len(stepTable) != len(AllStatuses) {
		t.Errorf("stepTable has %d statuses, want %d", len(stepTable), len(AllStatuses))
	}
	for _, s := range AllStatuses {
		row, ok := stepTable[s]
		if !ok {
			t.Errorf("stepTable has no row for %s", s)
			continue
		}
		if len(row) != len(allActions) {
			t.Errorf("stepTable[%s] has %d actions, want %d", s, len(row), len(allActions))
		}
		for _, a := range allActions {
			if _, ok := row[a]; !ok {
				t.Errorf("stepTable[%s] has no cell for %s", s, a)
			}
		}
	}
	if len(allActions) != 16 {
		t.Errorf("%d actions, want 12 user + 4 system", len(allActions))
	}
}

func TestStepTable(t *testing.T) {
	cfg := DefaultConfig()
	for _, s := range AllStatuses {
		for _, a := range allActions {
			want := stepTable[s][a]
			t.Run(fmt.Sprintf("%s/%s", s.Key(), a), func(t *testing.T) {
				m := fixture(s)
				in := Input{Action: a, Actor: actorFor(a), Now: tNow, Comment: "table"}
				stepAndCheck(t, m, in, cfg, want)
			})
		}
	}
}

// Starting a phase that netboots the machine records where the machine came
// from, so abort and the end of the phase can return there. Leaving rescue
// mode is not a new phase: it keeps the status from before rescue.
func TestStepStartPhaseRecordsPreviousStatus(t *testing.T) {
	cfg := DefaultConfig()
	for _, s := range AllStatuses {
		for _, a := range UserActions {
			want := stepTable[s][a]
			if want.err != errNone || want.power != pCycle {
				continue
			}
			m := fixture(s)
			out, err := Step(m, Input{Action: a, Actor: adminActor, Now: tNow}, cfg)
			if err != nil {
				t.Fatalf("%s/%s: %v", s, a, err)
			}
			prev := s
			switch {
			case a == ExitRescue:
				prev = m.PreviousStatus
			case len(want.via) > 0:
				prev = want.via[len(want.via)-1]
			}
			if out.Machine.PreviousStatus != prev {
				t.Errorf("%s/%s: PreviousStatus = %s, want %s", s, a, out.Machine.PreviousStatus, prev)
			}
		}
	}
}

// stepVariants covers cells whose answer depends on more than the status:
// the owner, PreviousStatus, or the input's options.
var stepVariants = []struct {
	name  string
	setup func(*Machine)
	in    Input
	want  expect
	check func(t *testing.T, m Machine, out Outcome)
}{
	// mark_fixed returns to Deployed only for an owned machine that was
	// Deployed; everything else becomes Ready, and Ready means free.
	{
		name:  "mark_fixed/broken while Ready",
		setup: func(m *Machine) { m.Status, m.PreviousStatus, m.Owner = Broken, Ready, "" },
		in:    Input{Action: MarkFixed, Actor: adminActor},
		want:  goes(Ready, pNone),
	},
	{
		name:  "mark_fixed/broken while Deployed but no owner",
		setup: func(m *Machine) { m.Status, m.PreviousStatus, m.Owner = Broken, Deployed, "" },
		in:    Input{Action: MarkFixed, Actor: adminActor},
		want:  goes(Ready, pNone),
	},
	{
		name:  "mark_fixed/broken while Allocated releases the owner",
		setup: func(m *Machine) { m.Status, m.PreviousStatus, m.Owner = Broken, Allocated, "alice" },
		in:    Input{Action: MarkFixed, Actor: adminActor},
		want:  goes(Ready, pNone),
		check: wantFree,
	},
	{
		name:  "mark_fixed/broken while Deploying releases the owner and OS",
		setup: func(m *Machine) { m.Status, m.PreviousStatus, m.Owner = Broken, Deploying, "alice" },
		in:    Input{Action: MarkFixed, Actor: adminActor},
		want:  goes(Ready, pNone),
		check: wantFree,
	},
	{
		name:  "mark_fixed/broken while Deployed keeps the owner and OS",
		setup: func(m *Machine) {},
		in:    Input{Action: MarkFixed, Actor: adminActor},
		want:  goes(Deployed, pNone),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.Owner != "alice" || out.Machine.OSystem != "ubuntu" {
				t.Errorf("owner/OS = %q/%q, want alice/ubuntu", out.Machine.Owner, out.Machine.OSystem)
			}
		},
	},
	// release of a Broken machine needs an owner to release it from.
	{
		name:  "release/broken without owner",
		setup: func(m *Machine) { m.Status, m.PreviousStatus, m.Owner = Broken, Ready, "" },
		in:    Input{Action: Release, Actor: adminActor},
		want:  refused,
	},
	{
		name:  "release/erase from Deployed",
		setup: func(m *Machine) { *m = fixture(Deployed) },
		in:    Input{Action: Release, Actor: aliceActor, Erase: EraseSecure},
		want:  goes(DiskErasing, pCycle),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.EraseMode != EraseSecure || out.Machine.PreviousStatus != Deployed {
				t.Errorf("EraseMode/PreviousStatus = %q/%s", out.Machine.EraseMode, out.Machine.PreviousStatus)
			}
		},
	},
	{
		name:  "release/erase from Broken",
		setup: func(m *Machine) {},
		in:    Input{Action: Release, Actor: adminActor, Erase: EraseFull},
		want:  goes(DiskErasing, pCycle),
	},
	{
		name:  "release/plain from FailedDiskErasing clears the erase mode",
		setup: func(m *Machine) { *m = fixture(FailedDiskErasing) },
		in:    Input{Action: Release, Actor: aliceActor},
		want:  goes(Releasing, pOff),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.EraseMode != EraseNone {
				t.Errorf("EraseMode = %q, want none", out.Machine.EraseMode)
			}
		},
	},
	// allocate and deploy of Ready machines.
	{
		name:  "allocate/Ready but owned",
		setup: func(m *Machine) { *m = fixture(Ready); m.Owner = "carol" },
		in:    Input{Action: Allocate, Actor: adminActor},
		want:  refused,
	},
	{
		name:  "deploy/Ready but owned",
		setup: func(m *Machine) { *m = fixture(Ready); m.Owner = "carol" },
		in:    Input{Action: Deploy, Actor: adminActor},
		want:  refused,
	},
	{
		name:  "allocate/by Anvil itself, which is nobody",
		setup: func(m *Machine) { *m = fixture(Ready) },
		in:    Input{Action: Allocate, Actor: SystemActor},
		want:  forbidden,
	},
	{
		name:  "deploy/Ready by Anvil itself, which is nobody",
		setup: func(m *Machine) { *m = fixture(Ready) },
		in:    Input{Action: Deploy, Actor: SystemActor},
		want:  forbidden,
	},
	{
		name:  "deploy/named OS",
		setup: func(m *Machine) { *m = fixture(Allocated) },
		in:    Input{Action: Deploy, Actor: aliceActor, OSystem: "centos", DistroSeries: "centos9"},
		want:  goes(Deploying, pCycle),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.OSystem != "centos" || out.Machine.DistroSeries != "centos9" {
				t.Errorf("OS = %s/%s, want centos/centos9", out.Machine.OSystem, out.Machine.DistroSeries)
			}
		},
	},
	{
		name:  "deploy/site default OS",
		setup: func(m *Machine) { *m = fixture(Allocated) },
		in:    Input{Action: Deploy, Actor: aliceActor},
		want:  goes(Deploying, pCycle),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.OSystem != "ubuntu" || out.Machine.DistroSeries != "noble" {
				t.Errorf("OS = %s/%s, want ubuntu/noble", out.Machine.OSystem, out.Machine.DistroSeries)
			}
		},
	},
	{
		name:  "deploy/only a series named uses the site OS",
		setup: func(m *Machine) { *m = fixture(Allocated) },
		in:    Input{Action: Deploy, Actor: aliceActor, DistroSeries: "jammy"},
		want:  goes(Deploying, pCycle),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.OSystem != "ubuntu" || out.Machine.DistroSeries != "jammy" {
				t.Errorf("OS = %s/%s, want ubuntu/jammy", out.Machine.OSystem, out.Machine.DistroSeries)
			}
		},
	},
	{
		name:  "deploy/Ready by admin allocates to admin",
		setup: func(m *Machine) { *m = fixture(Ready) },
		in:    Input{Action: Deploy, Actor: adminActor},
		want:  goesVia(Deploying, pCycle, Allocated),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.Owner != "admin" || len(out.Events) != 2 {
				t.Errorf("owner %q, %d events; want admin, 2 (allocated, deploying)", out.Machine.Owner, len(out.Events))
			}
		},
	},
	// Testing returns where it started, unless that is a failed or
	// in-progress status, or one the table does not allow from Testing.
	{
		name:  "succeed/testing a Deployed machine",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = Deployed, "alice" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Deployed, pNone),
	},
	{
		name:  "succeed/testing an Allocated machine",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = Allocated, "alice" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Allocated, pOff),
	},
	{
		name:  "succeed/testing a Broken machine",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = Broken, "alice" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Broken, pOff),
	},
	{
		name:  "succeed/testing after a failed deployment makes it Ready and free",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = FailedDeployment, "alice" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Ready, pOff),
		check: wantFree,
	},
	{
		name:  "succeed/testing after failed testing",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus = FailedTesting },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Ready, pOff),
	},
	{
		name:  "succeed/testing from rescue mode",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus = RescueMode },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Ready, pOff),
	},
	{
		name:  "abort/testing a Deployed machine",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = Deployed, "alice" },
		in:    Input{Action: Abort, Actor: aliceActor},
		want:  goes(Deployed, pOff),
	},
	{
		name:  "abort/testing after a failed deployment",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus, m.Owner = FailedDeployment, "alice" },
		in:    Input{Action: Abort, Actor: aliceActor},
		want:  goes(FailedDeployment, pOff),
	},
	{
		name:  "abort/testing from rescue mode fails the test",
		setup: func(m *Machine) { *m = fixture(Testing); m.PreviousStatus = RescueMode },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(FailedTesting, pOff),
	},
	// Aborted commissioning returns where it started, or fails.
	{
		name:  "abort/commissioning a Ready machine",
		setup: func(m *Machine) { *m = fixture(Commissioning); m.PreviousStatus = Ready },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(Ready, pOff),
	},
	{
		name:  "abort/commissioning a Broken machine",
		setup: func(m *Machine) { *m = fixture(Commissioning); m.PreviousStatus = Broken },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(Broken, pOff),
	},
	{
		name:  "abort/commissioning after failed testing",
		setup: func(m *Machine) { *m = fixture(Commissioning); m.PreviousStatus = FailedTesting },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(FailedCommissioning, pOff),
	},
	{
		// Debatable: commission is allowed from Testing (the table has
		// Testing → Commissioning), and abort then goes back to Testing,
		// an in-progress status with nothing running, until it times out.
		name:  "abort/commissioning started during testing",
		setup: func(m *Machine) { *m = fixture(Commissioning); m.PreviousStatus = Testing },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(Testing, pOff),
	},
	// Rescue mode.
	{
		name:  "abort/entering rescue mode from Ready",
		setup: func(m *Machine) { *m = fixture(EnteringRescueMode); m.PreviousStatus, m.Owner = Ready, "" },
		in:    Input{Action: Abort, Actor: adminActor},
		want:  goes(Ready, pOff),
	},
	{
		name: "abort/entering rescue mode from a status it cannot return to",
		setup: func(m *Machine) {
			*m = fixture(EnteringRescueMode)
			m.PreviousStatus, m.Owner = FailedCommissioning, ""
		},
		in:   Input{Action: Abort, Actor: adminActor},
		want: goes(FailedEnteringRescueMode, pOff),
	},
	{
		name:  "exit_rescue_mode/machine that was not Deployed is powered off",
		setup: func(m *Machine) { *m = fixture(RescueMode); m.PreviousStatus, m.Owner = Ready, "" },
		in:    Input{Action: ExitRescue, Actor: adminActor},
		want:  goes(ExitingRescueMode, pOff),
	},
	{
		name:  "exit_rescue_mode/after failing to enter",
		setup: func(m *Machine) { *m = fixture(FailedEnteringRescueMode); m.PreviousStatus, m.Owner = Ready, "" },
		in:    Input{Action: ExitRescue, Actor: adminActor},
		want:  goes(ExitingRescueMode, pOff),
	},
	{
		name:  "succeed/exiting rescue mode to Ready",
		setup: func(m *Machine) { *m = fixture(ExitingRescueMode); m.PreviousStatus, m.Owner = Ready, "" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Ready, pNone),
	},
	{
		name:  "succeed/exiting rescue mode to a failed status",
		setup: func(m *Machine) { *m = fixture(ExitingRescueMode); m.PreviousStatus = FailedDeployment },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(FailedDeployment, pNone),
	},
	{
		name:  "succeed/exiting rescue mode to a status the table forbids",
		setup: func(m *Machine) { *m = fixture(ExitingRescueMode); m.PreviousStatus, m.Owner = Commissioning, "" },
		in:    Input{Action: Succeed, Actor: SystemActor},
		want:  goes(Ready, pNone),
	},
	{
		// Debatable: retrying rescue from FailedEnteringRescueMode records
		// that as PreviousStatus, so a good round trip ends there (MAAS's
		// table allows ExitingRescueMode → FailedEnteringRescueMode).
		name:  "rescue_mode/retry forgets the status before the first attempt",
		setup: func(m *Machine) { *m = fixture(FailedEnteringRescueMode) },
		in:    Input{Action: EnterRescue, Actor: adminActor},
		want:  goes(EnteringRescueMode, pCycle),
		check: func(t *testing.T, m Machine, out Outcome) {
			if out.Machine.PreviousStatus != FailedEnteringRescueMode {
				t.Errorf("PreviousStatus = %s", out.Machine.PreviousStatus)
			}
		},
	},
	// Failing.
	{
		name:  "fail/without a reason",
		setup: func(m *Machine) { *m = fixture(Deploying) },
		in:    Input{Action: Fail, Actor: SystemActor},
		want:  goes(FailedDeployment, pNone),
		check: func(t *testing.T, m Machine, out Outcome) {
			if want := "Deploying failed: no reason given"; out.Machine.StatusMessage != want {
				t.Errorf("StatusMessage = %q, want %q", out.Machine.StatusMessage, want)
			}
		},
	},
	{
		name:  "fail/with a reason keeps the owner",
		setup: func(m *Machine) { *m = fixture(Deploying) },
		in:    Input{Action: Fail, Actor: SystemActor, Comment: "curtin exited 3"},
		want:  goes(FailedDeployment, pNone),
		check: func(t *testing.T, m Machine, out Outcome) {
			if want := "Deploying failed: curtin exited 3"; out.Machine.StatusMessage != want {
				t.Errorf("StatusMessage = %q, want %q", out.Machine.StatusMessage, want)
			}
			if out.Machine.Owner != "alice" {
				t.Errorf("owner = %q, want alice", out.Machine.Owner)
			}
			if ev := out.Events[len(out.Events)-1]; !strings.Contains(ev.Description, "curtin exited 3") {
				t.Errorf("event %q does not carry the reason", ev.Description)
			}
		},
	},
	// Comments and actors are recorded.
	{
		name:  "mark_broken/comment and actor in the message",
		setup: func(m *Machine) { *m = fixture(Deployed) },
		in:    Input{Action: MarkBroken, Actor: aliceActor, Comment: "PSU fan"},
		want:  goes(Broken, pNone),
		check: func(t *testing.T, m Machine, out Outcome) {
			if want := "Marked broken by alice: PSU fan"; out.Machine.StatusMessage != want {
				t.Errorf("StatusMessage = %q, want %q", out.Machine.StatusMessage, want)
			}
			if out.Machine.PreviousStatus != Deployed || out.Machine.Owner != "alice" {
				t.Errorf("PreviousStatus/owner = %s/%q", out.Machine.PreviousStatus, out.Machine.Owner)
			}
		},
	},
	{
		name:  "power_on/records a request event",
		setup: func(m *Machine) { *m = fixture(Deployed) },
		in:    Input{Action: PowerOnAction, Actor: aliceActor},
		want:  goes(Deployed, pOn),
		check: func(t *testing.T, m Machine, out Outcome) {
			if len(out.Events) != 1 || out.Events[0].Level != LevelInfo {
				t.Errorf("events = %+v, want one INFO event", out.Events)
			}
			if out.Machine.StatusMessage != m.StatusMessage {
				t.Errorf("a power request changed the status message")
			}
		},
	},
	{
		name:  "heartbeat/records nothing",
		setup: func(m *Machine) { *m = fixture(Deploying) },
		in:    Input{Action: Heartbeat, Actor: SystemActor},
		want:  goes(Deploying, pNone),
		check: func(t *testing.T, m Machine, out Outcome) {
			if len(out.Events) != 0 {
				t.Errorf("a heartbeat recorded %d events", len(out.Events))
			}
		},
	},
}

func wantFree(t *testing.T, m Machine, out Outcome) {
	t.Helper()
	got := out.Machine
	if got.Owner != "" || got.OSystem != "" || got.DistroSeries != "" || got.EraseMode != EraseNone {
		t.Errorf("owner/OS/series/erase = %q/%q/%q/%q, want all empty", got.Owner, got.OSystem, got.DistroSeries, got.EraseMode)
	}
}

func TestStepVariants(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range stepVariants {
		t.Run(tc.name, func(t *testing.T) {
			m := fixture(Broken)
			tc.setup(&m)
			in := tc.in
			in.Now = tNow
			out := stepAndCheck(t, m, in, cfg, tc.want)
			if tc.check != nil && tc.want.err == errNone {
				tc.check(t, m, out)
			}
		})
	}
}

func TestStepUnknownAction(t *testing.T) {
	m := fixture(Ready)
	out, err := Step(m, Input{Action: "explode", Actor: adminActor, Now: tNow}, DefaultConfig())
	if err == nil {
		t.Fatal("an unknown action was accepted")
	}
	if kind, _ := kindOf(err); kind != errNone {
		t.Errorf("unknown action reported as %v; want a plain error", kind)
	}
	if !strings.Contains(err.Error(), "explode") {
		t.Errorf("error %q does not name the action", err)
	}
	if out.Machine.SystemID != "" || out.Events != nil {
		t.Errorf("refused step returned a non-empty Outcome")
	}
}

// A machine whose fields are nil or empty goes through Step too.
func TestStepMinimalMachine(t *testing.T) {
	m := Machine{SystemID: "abc", Status: New}
	out := stepAndCheck(t, m, Input{Action: Commission, Actor: adminActor, Now: tNow}, DefaultConfig(), goes(Commissioning, pCycle))
	if out.Machine.Interfaces != nil || out.Machine.Tags != nil || out.Machine.PowerParams != nil {
		t.Errorf("nil slices and maps should stay nil: %+v", out.Machine)
	}
}
