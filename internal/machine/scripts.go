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
	ScriptTimeout ScriptStatus = 4
	ScriptAborted ScriptStatus = 5
	Degraded      ScriptStatus = 6
)

// ScriptSummary is what the machine's newest script sets say, in MAAS's
// fields (commissioning_status, testing_status, cpu_test_status, ...).
// The region recomputes it whenever a set or a result changes; Known is
// false until the machine has run a set.
type ScriptSummary struct {
	Known         bool         `json:"known"`
	Commissioning ScriptStatus `json:"commissioning"`
	Testing       ScriptStatus `json:"testing"`
	CPU           ScriptStatus `json:"cpu"`
	Memory        ScriptStatus `json:"memory"`
	Storage       ScriptStatus `json:"storage"`
	Network       ScriptStatus `json:"network"`
	Interface     ScriptStatus `json:"interface"`
	Other         ScriptStatus `json:"other"`
	// CommissioningSet and TestingSet are the ids of the newest sets of
	// each type (MAAS's current_commissioning_result_id and
	// current_testing_result_id); 0 when the machine has none.
	CommissioningSet int64 `json:"commissioning_set,omitempty"`
	TestingSet       int64 `json:"testing_set,omitempty"`
}

var scriptStatusNames = map[ScriptStatus]string{
	ScriptPending: "Pending", ScriptRunning: "Running", ScriptPassed: "Passed", ScriptFailed: "Failed",
	ScriptTimeout: "Timed out", ScriptAborted: "Aborted", Degraded: "Degraded",
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
// Once script sets ran, it is their summary; before that (machines
// commissioned before scripts existed) it is the phase's outcome: pending while the phase runs, failed when it failed,
// passed once an inventory was stored, and no scripts before that.
func (m *Machine) CommissioningStatus() ScriptStatus {
	if m.Scripts.Known && m.Scripts.Commissioning != NoScripts {
		return m.Scripts.Commissioning
	}
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
	if m.Scripts.Known && m.Scripts.Testing != NoScripts {
		return m.Scripts.Testing
	}
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
func (m *Machine) NetbootFlag() bool {
	return (m.Status != Deployed || m.EphemeralDeploy) && !m.AwaitsLocalBoot()
}
