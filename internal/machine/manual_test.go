package machine

import (
	"strings"
	"testing"
)

// A step that needs power on a manual machine says what the operator must
// do, in the status message and on the timeline; other power types and
// steps without power say nothing of the kind.
func TestManualPowerAsksAPerson(t *testing.T) {
	cfg := DefaultConfig()
	for _, c := range []struct {
		name      string
		status    Status
		powerType string
		action    Action
		want      string // in the status message and a warning; "" for none
	}{
		{"commission", Ready, ManualPower, Commission, "power it on now (reset it if it is on)"},
		{"deploy", Allocated, ManualPower, Deploy, "power it on now (reset it if it is on)"},
		{"power on", Deployed, ManualPower, PowerOnAction, "power it on now: Anvil cannot power this machine (power type manual)"},
		{"release", Deployed, ManualPower, Release, "power it off now"},
		{"mark broken", Ready, ManualPower, MarkBroken, ""},
		{"deploy over IPMI", Allocated, "ipmi", Deploy, ""},
	} {
		m := fixture(c.status)
		m.PowerType = c.powerType
		o, err := Step(m, Input{Action: c.action, Actor: adminActor, Now: tNow}, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var warned []string
		for _, e := range o.Events {
			if e.Type == "Power needed" && e.Level == LevelWarning {
				warned = append(warned, e.Description)
			}
		}
		if c.want == "" {
			if len(warned) != 0 || strings.Contains(o.Machine.StatusMessage, "now") {
				t.Errorf("%s: asked a person: %q %q", c.name, warned, o.Machine.StatusMessage)
			}
			continue
		}
		if len(warned) != 1 || !strings.Contains(warned[0], c.want) || !strings.Contains(o.Machine.StatusMessage, c.want) {
			t.Errorf("%s: warnings %q, status message %q; want %q in both", c.name, warned, o.Machine.StatusMessage, c.want)
		}
	}
}

// Asking again replaces the earlier ask in the status message.
func TestManualPowerAskedOnce(t *testing.T) {
	m := fixture(Deployed)
	m.PowerType = ManualPower
	for _, a := range []Action{PowerOnAction, PowerOnAction, PowerOffAction} {
		o, err := Step(m, Input{Action: a, Actor: adminActor, Now: tNow}, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		m = o.Machine
	}
	if got := m.StatusMessage; strings.Count(got, "power it") != 1 || !strings.HasSuffix(got, "power it off now: Anvil cannot power this machine (power type manual)") {
		t.Errorf("status message %q; want one ask, the last", got)
	}
}
