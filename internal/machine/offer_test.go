package machine

import (
	"slices"
	"testing"
	"time"
)

func TestOffered(t *testing.T) {
	admin := Actor{Name: "ada", Admin: true}
	bob := Actor{Name: "bob"}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		m     Machine
		actor Actor
		want  []Action
	}{
		{"new, admin", Machine{Status: New}, admin,
			[]Action{Commission, MarkBroken, EnterRescue, PowerOnAction, PowerOffAction}},
		{"ready, admin", Machine{Status: Ready}, admin,
			[]Action{Commission, Allocate, Deploy, MarkBroken, EnterRescue, Test, PowerOnAction, PowerOffAction}},
		{"ready, user", Machine{Status: Ready}, bob, []Action{Allocate, Deploy}},
		{"deployed, owner", Machine{Status: Deployed, Owner: "bob"}, bob,
			[]Action{Release, MarkBroken, PowerOnAction, PowerOffAction}},
		{"deployed, someone else's", Machine{Status: Deployed, Owner: "carol"}, bob, nil},
		{"commissioning, admin", Machine{Status: Commissioning, PreviousStatus: New}, admin,
			[]Action{Abort, MarkBroken, PowerOnAction, PowerOffAction}},
		{"broken, admin", Machine{Status: Broken, PreviousStatus: Ready}, admin,
			[]Action{Commission, MarkFixed, EnterRescue, Test, PowerOnAction, PowerOffAction}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Offered(tc.m, tc.actor, DefaultConfig(), now)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("offered %v; want %v", got, tc.want)
			}
			// Every offered action is one Step accepts, and every other
			// user action one it refuses.
			for _, a := range UserActions {
				_, err := Step(tc.m, Input{Action: a, Actor: tc.actor, Now: now}, DefaultConfig())
				if (err == nil) != slices.Contains(got, a) {
					t.Errorf("%s: Step error %v, offered %v", a, err, slices.Contains(got, a))
				}
			}
		})
	}
}

func TestDescribeBMC(t *testing.T) {
	for id, want := range map[string]string{
		"ipmi|127.0.0.1|47950|": "IPMI at 127.0.0.1, port 47950",
		"redfish|bmc-7|443|1":   "Redfish at bmc-7, port 443, system 1",
		"":                      "",
		"webhook|192.0.2.9||":   "webhook at 192.0.2.9",
	} {
		if got := DescribeBMC(id); got != want {
			t.Errorf("DescribeBMC(%q) = %q; want %q", id, got, want)
		}
	}
}
