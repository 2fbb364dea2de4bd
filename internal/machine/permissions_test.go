package machine

import (
	"fmt"
	"testing"
)

// perm is whether a non-admin user gets past authorisation.
type perm int

const (
	denied  perm = iota // ForbiddenError, whatever the status
	allowed             // authorised: the answer is the main table's
)

// permTable says, for each action, whether a non-admin user may take it on
// a machine they own, on one someone else owns, and on a free machine.
// Authorisation comes before the status check: a refused user learns
// nothing about whether the action would have been valid.
var permTable = map[Action]struct{ own, others, free perm }{
	Commission:     {denied, denied, denied},    // admin only
	Abort:          {allowed, denied, denied},   // owner only
	Allocate:       {allowed, allowed, allowed}, // any user (the machine must be free)
	Deploy:         {allowed, denied, allowed},  // owner, or anyone for a free machine (deploy allocates it on the way, as in MAAS)
	Release:        {allowed, denied, denied},
	MarkBroken:     {allowed, denied, denied},
	MarkFixed:      {denied, denied, denied},
	EnterRescue:    {denied, denied, denied},
	ExitRescue:     {denied, denied, denied},
	Test:           {denied, denied, denied},
	PowerOnAction:  {allowed, denied, denied},
	PowerOffAction: {allowed, denied, denied},
	Succeed:        {denied, denied, denied}, // Anvil only
	Fail:           {denied, denied, denied},
	Heartbeat:      {denied, denied, denied},
	Installed:      {denied, denied, denied},
}

func TestPermTableIsComplete(t *testing.T) {
	for _, a := range allActions {
		if _, ok := permTable[a]; !ok {
			t.Errorf("permTable has no row for %s", a)
		}
	}
	if len(permTable) != len(allActions) {
		t.Errorf("permTable has %d rows, want %d", len(permTable), len(allActions))
	}
}

// TestPermissions runs every status × every action for the owner (alice)
// and a stranger (bob), neither an admin. Where the user is authorised, the
// answer must be the main table's (with the user, not the admin, as owner
// of anything allocated).
func TestPermissions(t *testing.T) {
	cfg := DefaultConfig()
	for _, s := range AllStatuses {
		m := fixture(s)
		for _, actor := range []Actor{aliceActor, bobActor} {
			for _, a := range allActions {
				var p perm
				row := permTable[a]
				switch {
				case m.Owner == "":
					p = row.free
				case m.Owner == actor.Name:
					p = row.own
				default:
					p = row.others
				}
				want := forbidden
				if p == allowed {
					want = stepTable[s][a]
				}
				t.Run(fmt.Sprintf("%s/%s/%s", s.Key(), actor.Name, a), func(t *testing.T) {
					in := Input{Action: a, Actor: actor, Now: tNow}
					out := stepAndCheck(t, m, in, cfg, want)
					if p == allowed && (a == Allocate || a == Deploy) && want.err == errNone && m.Owner == "" {
						if out.Machine.Owner != actor.Name {
							t.Errorf("owner = %q, want %q", out.Machine.Owner, actor.Name)
						}
					}
				})
			}
		}
	}
}

// Admins may take every user action (the main table); system actions are
// Anvil's alone, admin or not.
func TestAdminCannotTakeSystemActions(t *testing.T) {
	for _, s := range AllStatuses {
		for _, a := range SystemActions {
			in := Input{Action: a, Actor: adminActor, Now: tNow}
			t.Run(fmt.Sprintf("%s/%s", s.Key(), a), func(t *testing.T) {
				stepAndCheck(t, fixture(s), in, DefaultConfig(), forbidden)
			})
		}
	}
}

// Anvil itself passes every authorisation check: the power coordinator and
// status monitor act on machines nobody in particular owns.
func TestSystemActorIsAuthorised(t *testing.T) {
	cases := []struct {
		status Status
		action Action
		want   expect
	}{
		{Deployed, PowerOffAction, goes(Deployed, pOff)},
		{Commissioning, Abort, goes(New, pOff)},
		{Broken, MarkFixed, goes(Deployed, pNone)},
		{Ready, Commission, goes(Commissioning, pCycle)},
		{Ready, Allocate, forbidden}, // an allocation needs a user to own the machine
		{New, Allocate, refused},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.status.Key(), tc.action), func(t *testing.T) {
			stepAndCheck(t, fixture(tc.status), Input{Action: tc.action, Actor: SystemActor, Now: tNow}, DefaultConfig(), tc.want)
		})
	}
}

// An actor with a name but no admin flag who owns nothing cannot act on a
// machine that has no owner, even one that is otherwise free to take.
func TestNoNameIsNotAnOwner(t *testing.T) {
	m := fixture(Allocated)
	m.Owner = ""
	anon := Actor{}
	stepAndCheck(t, m, Input{Action: Release, Actor: anon, Now: tNow}, DefaultConfig(), forbidden)
	stepAndCheck(t, fixture(Ready), Input{Action: Allocate, Actor: anon, Now: tNow}, DefaultConfig(), forbidden)
}

func TestCanViewAndCanEdit(t *testing.T) {
	free, alices := fixture(Ready), fixture(Deployed)
	cases := []struct {
		actor      Actor
		m          Machine
		view, edit bool
	}{
		{adminActor, free, true, true},
		{adminActor, alices, true, true},
		{SystemActor, free, true, true},
		{SystemActor, alices, true, true},
		{aliceActor, free, true, false},
		{aliceActor, alices, true, true},
		{bobActor, free, true, false},
		{bobActor, alices, false, false},
		{Actor{}, free, true, false},
		{Actor{}, alices, false, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.actor.Name, tc.m.Status.Key()), func(t *testing.T) {
			if got := CanView(tc.actor, &tc.m); got != tc.view {
				t.Errorf("CanView = %v, want %v", got, tc.view)
			}
			if got := CanEdit(tc.actor, &tc.m); got != tc.edit {
				t.Errorf("CanEdit = %v, want %v", got, tc.edit)
			}
		})
	}
}
