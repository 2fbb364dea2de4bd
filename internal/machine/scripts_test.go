package machine

import "testing"

func TestScriptStatusSummaries(t *testing.T) {
	inv := &Inventory{CPU: CPU{Threads: 2}}
	cases := []struct {
		name          string
		m             Machine
		commissioning ScriptStatus
		testing       ScriptStatus
		netboot       bool
	}{
		{"new", Machine{Status: New}, NoScripts, NoScripts, true},
		{"commissioning", Machine{Status: Commissioning}, ScriptPending, NoScripts, true},
		{"recommissioning", Machine{Status: Commissioning, Inventory: inv}, ScriptPending, NoScripts, true},
		{"failed commissioning", Machine{Status: FailedCommissioning}, ScriptFailed, NoScripts, true},
		{"ready", Machine{Status: Ready, Inventory: inv}, ScriptPassed, NoScripts, true},
		{"ready without inventory", Machine{Status: Ready}, NoScripts, NoScripts, true},
		{"testing", Machine{Status: Testing, Inventory: inv}, ScriptPassed, ScriptPending, true},
		{"failed testing", Machine{Status: FailedTesting, Inventory: inv}, ScriptPassed, ScriptFailed, true},
		{"deploying, netbooting", Machine{Status: Deploying, Netboot: true, Inventory: inv}, ScriptPassed, NoScripts, true},
		{"deploying, image on disk", Machine{Status: Deploying, Inventory: inv}, ScriptPassed, NoScripts, false},
		{"deployed", Machine{Status: Deployed, Inventory: inv}, ScriptPassed, NoScripts, false},
		{"released", Machine{Status: Releasing, Inventory: inv}, ScriptPassed, NoScripts, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.CommissioningStatus(); got != c.commissioning {
				t.Errorf("commissioning %v, want %v", got, c.commissioning)
			}
			if got := c.m.TestingStatus(); got != c.testing {
				t.Errorf("testing %v, want %v", got, c.testing)
			}
			if got := c.m.NetbootFlag(); got != c.netboot {
				t.Errorf("netboot %v, want %v", got, c.netboot)
			}
		})
	}
}

func TestScriptStatusNames(t *testing.T) {
	for s, want := range map[ScriptStatus]string{NoScripts: "Unknown", ScriptPending: "Pending", ScriptRunning: "Running",
		ScriptPassed: "Passed", ScriptFailed: "Failed", ScriptStatus(42): "Unknown"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s.String(), want)
		}
	}
}
