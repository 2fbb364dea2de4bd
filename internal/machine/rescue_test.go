package machine

import (
	"strings"
	"testing"
)

// A rescue round trip, step by step: who owns the machine, what it boots,
// what power it asks for at each point.
func TestRescueRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	sys := func(a Action) Input { return Input{Action: a, Actor: SystemActor, Now: tNow} }
	for _, tc := range []struct {
		from       Status
		owner      string
		exitPower  PowerAction
		exitBoot   BootPurpose // what a network boot gets while exiting
		end        Status
		endOwner   string
		endByPower bool // the exit ends with the power-off report
	}{
		{Deployed, "alice", PowerRestart, BootLocal, Deployed, "alice", false},
		{Ready, "", PowerDown, BootPowerOff, Ready, "", true},
		{Broken, "bob", PowerDown, BootPowerOff, Broken, "bob", true},
		{New, "", PowerDown, BootPowerOff, New, "", true},
	} {
		t.Run(tc.from.String(), func(t *testing.T) {
			m := fixture(tc.from)
			m.Owner = tc.owner
			out, err := Step(m, Input{Action: EnterRescue, Actor: adminActor, Now: tNow, From: "192.0.2.7"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m = out.Machine
			wantOwner := tc.owner
			if wantOwner == "" {
				wantOwner = adminActor.Name // lent to the rescuer
			}
			if m.Status != EnteringRescueMode || out.Power != PowerRestart || m.Owner != wantOwner || BootPurposeOf(&m) != BootEphemeral {
				t.Fatalf("enter: status %s power %s owner %q boot %s", m.Status, out.Power, m.Owner, BootPurposeOf(&m))
			}
			if m.RescueFrom != "192.0.2.7" {
				t.Fatalf("enter: rescue asked from %q; want the request's address", m.RescueFrom)
			}
			if out, err = Step(m, sys(Succeed), cfg); err != nil || out.Machine.Status != RescueMode {
				t.Fatalf("environment up: %v %s", err, out.Machine.Status)
			}
			m = out.Machine
			if out, err = Step(m, Input{Action: ExitRescue, Actor: adminActor, Now: tNow}, cfg); err != nil {
				t.Fatal(err)
			}
			m = out.Machine
			if m.Status != ExitingRescueMode || out.Power != tc.exitPower || BootPurposeOf(&m) != tc.exitBoot {
				t.Fatalf("exit: status %s power %s boot %s", m.Status, out.Power, BootPurposeOf(&m))
			}
			if m.EndsOnLocalBoot() != (tc.exitBoot == BootLocal) {
				t.Errorf("EndsOnLocalBoot = %v", m.EndsOnLocalBoot())
			}
			if tc.endByPower {
				out = ApplyPower(m, PowerReport{Action: PowerDown, State: PowerOff, Now: tNow}, cfg)
			} else {
				out, err = Step(m, sys(Succeed), cfg)
				if err != nil {
					t.Fatal(err)
				}
			}
			if out.Machine.Status != tc.end || out.Machine.Owner != tc.endOwner {
				t.Errorf("end: status %s owner %q, want %s %q", out.Machine.Status, out.Machine.Owner, tc.end, tc.endOwner)
			}
		})
	}
}

// Refusals carry MAAS's words (its NodeStateViolation), and only an
// administrator may start or end rescue mode, as MAAS's API demands.
func TestRescueRefusals(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		status Status
		action Action
		actor  Actor
		want   string
	}{
		{Commissioning, EnterRescue, adminActor, "Invalid transition: Commissioning -> Entering rescue mode."},
		{Deploying, EnterRescue, adminActor, "Invalid transition: Deploying -> Entering rescue mode."},
		{Deployed, ExitRescue, adminActor, "Invalid transition: Deployed -> Exiting rescue mode."},
		{Deployed, EnterRescue, Actor{Name: "alice"}, "an administrator must do this"},
		{RescueMode, ExitRescue, Actor{Name: "alice"}, "an administrator must do this"},
	} {
		m := fixture(tc.status)
		m.Owner = "alice"
		_, err := Step(m, Input{Action: tc.action, Actor: tc.actor, Now: tNow}, cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s by %s: %v, want %q", tc.action, tc.status, tc.actor.Name, err, tc.want)
		}
	}
}
