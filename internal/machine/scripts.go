package machine

// ScriptStatus is MAAS's status of a set of commissioning or testing
// scripts. The numbers are MAAS's and part of the API (commissioning_status,
// testing_status, ...); NoScripts is what MAAS answers when none ran.
type ScriptStatus int

const (
	NoScripts     ScriptStatus = -1
	ScriptPending ScriptStatus = 0
	ScriptRunning ScriptStatus = 1
	ScriptPassed  ScriptStatus = 2
	ScriptFailed  ScriptStatus = 3
)

var scriptStatusNames = map[ScriptStatus]string{
	ScriptPending: "Pending", ScriptRunning: "Running", ScriptPassed: "Passed", ScriptFailed: "Failed",
}

// String is MAAS's name of the status; "Unknown" for NoScripts, as MAAS
// names any status it has no choice for.
func (s ScriptStatus) String() string {
	if n, ok := scriptStatusNames[s]; ok {
		return n
	}
	return "Unknown"
}

// CommissioningStatus summarises commissioning as MAAS's script status.
// Anvil runs commissioning as one unit, not as scripts, so the summary is
// its outcome: pending while the phase runs, failed when it failed,
// passed once an inventory was stored, and no scripts before that.
func (m *Machine) CommissioningStatus() ScriptStatus {
	switch {
	case m.Status == Commissioning:
		return ScriptPending
	case m.Status == FailedCommissioning:
		return ScriptFailed
	case m.Inventory != nil:
		return ScriptPassed
	}
	return NoScripts
}

// TestingStatus is the same summary for testing. A passed test run leaves
// no trace on the machine (it returns to its previous status), so only a
// running or failed one shows.
func (m *Machine) TestingStatus() ScriptStatus {
	switch m.Status {
	case Testing:
		return ScriptPending
	case FailedTesting:
		return ScriptFailed
	}
	return NoScripts
}

// NetbootFlag is MAAS's netboot: true until an image is on the machine's
// disk, so a deployed machine (or one deploying whose image is written)
// boots locally and every other one boots from the network.
func (m *Machine) NetbootFlag() bool { return m.Status != Deployed && !m.AwaitsLocalBoot() }
