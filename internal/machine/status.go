// Package machine is Anvil's domain core: what a machine is, which statuses it
// can be in, which actions move it between them, and when a status expires.
//
// Everything here is plain data and pure functions. Nothing opens a socket or
// a file and nothing reads the clock: callers pass time in and carry out the
// effects (power intents, events) that a step returns. That keeps every
// lifecycle rule testable with tables and keeps protocol code from deciding
// lifecycle questions.
package machine

import "fmt"

// Status is a machine's lifecycle status. The numbers are MAAS's and are part
// of the API: clients compare them.
type Status int

const (
	New                      Status = 0
	Commissioning            Status = 1
	FailedCommissioning      Status = 2
	Missing                  Status = 3
	Ready                    Status = 4
	Reserved                 Status = 5
	Deployed                 Status = 6
	Retired                  Status = 7
	Broken                   Status = 8
	Deploying                Status = 9
	Allocated                Status = 10
	FailedDeployment         Status = 11
	Releasing                Status = 12
	FailedReleasing          Status = 13
	DiskErasing              Status = 14
	FailedDiskErasing        Status = 15
	RescueMode               Status = 16
	EnteringRescueMode       Status = 17
	FailedEnteringRescueMode Status = 18
	ExitingRescueMode        Status = 19
	FailedExitingRescueMode  Status = 20
	Testing                  Status = 21
	FailedTesting            Status = 22
)

// AllStatuses lists every status in numeric order.
var AllStatuses = []Status{
	New, Commissioning, FailedCommissioning, Missing, Ready, Reserved,
	Deployed, Retired, Broken, Deploying, Allocated, FailedDeployment,
	Releasing, FailedReleasing, DiskErasing, FailedDiskErasing, RescueMode,
	EnteringRescueMode, FailedEnteringRescueMode, ExitingRescueMode,
	FailedExitingRescueMode, Testing, FailedTesting,
}

// statusNames are the display names MAAS returns as status_name.
var statusNames = map[Status]string{
	New:                      "New",
	Commissioning:            "Commissioning",
	FailedCommissioning:      "Failed commissioning",
	Missing:                  "Missing",
	Ready:                    "Ready",
	Reserved:                 "Reserved",
	Deployed:                 "Deployed",
	Retired:                  "Retired",
	Broken:                   "Broken",
	Deploying:                "Deploying",
	Allocated:                "Allocated",
	FailedDeployment:         "Failed deployment",
	Releasing:                "Releasing",
	FailedReleasing:          "Releasing failed",
	DiskErasing:              "Disk erasing",
	FailedDiskErasing:        "Failed disk erasing",
	RescueMode:               "Rescue mode",
	EnteringRescueMode:       "Entering rescue mode",
	FailedEnteringRescueMode: "Failed to enter rescue mode",
	ExitingRescueMode:        "Exiting rescue mode",
	FailedExitingRescueMode:  "Failed to exit rescue mode",
	Testing:                  "Testing",
	FailedTesting:            "Failed testing",
}

// statusKeys are the upper-case identifiers (NODE_STATUS.X in MAAS); clients
// filter with their lower-case form (status=ready, status=failed_deployment).
var statusKeys = map[Status]string{
	New: "NEW", Commissioning: "COMMISSIONING", FailedCommissioning: "FAILED_COMMISSIONING",
	Missing: "MISSING", Ready: "READY", Reserved: "RESERVED", Deployed: "DEPLOYED",
	Retired: "RETIRED", Broken: "BROKEN", Deploying: "DEPLOYING", Allocated: "ALLOCATED",
	FailedDeployment: "FAILED_DEPLOYMENT", Releasing: "RELEASING", FailedReleasing: "FAILED_RELEASING",
	DiskErasing: "DISK_ERASING", FailedDiskErasing: "FAILED_DISK_ERASING", RescueMode: "RESCUE_MODE",
	EnteringRescueMode: "ENTERING_RESCUE_MODE", FailedEnteringRescueMode: "FAILED_ENTERING_RESCUE_MODE",
	ExitingRescueMode: "EXITING_RESCUE_MODE", FailedExitingRescueMode: "FAILED_EXITING_RESCUE_MODE",
	Testing: "TESTING", FailedTesting: "FAILED_TESTING",
}

// String returns MAAS's display name ("Failed deployment").
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Key returns MAAS's identifier ("FAILED_DEPLOYMENT").
func (s Status) Key() string { return statusKeys[s] }

// Valid reports whether s is one of the 23 statuses.
func (s Status) Valid() bool { _, ok := statusNames[s]; return ok }

// ParseStatus accepts a number ("4"), an identifier in any case ("ready",
// "FAILED_DEPLOYMENT") or a display name ("Failed deployment").
func ParseStatus(v string) (Status, error) {
	for s, k := range statusKeys {
		if equalFold(v, k) || equalFold(v, statusNames[s]) || v == fmt.Sprint(int(s)) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown status %q", v)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// failedTwin maps each in-progress status to the status it fails into.
var failedTwin = map[Status]Status{
	Commissioning:      FailedCommissioning,
	Deploying:          FailedDeployment,
	Releasing:          FailedReleasing,
	DiskErasing:        FailedDiskErasing,
	EnteringRescueMode: FailedEnteringRescueMode,
	ExitingRescueMode:  FailedExitingRescueMode,
	Testing:            FailedTesting,
}

// FailedTwin returns the failed status of an in-progress status.
func (s Status) FailedTwin() (Status, bool) { f, ok := failedTwin[s]; return f, ok }

// InProgress reports whether s is a phase Anvil drives (it has a failed twin).
func (s Status) InProgress() bool { _, ok := failedTwin[s]; return ok }

// Failed reports whether s is the failed twin of some in-progress status.
func (s Status) Failed() bool {
	for _, f := range failedTwin {
		if f == s {
			return true
		}
	}
	return false
}

// Monitored reports whether a status carries an expiry. Every in-progress
// status is monitored, disk erasing included: MAAS leaves an erase without a
// deadline, so a hung erase sits forever; Anvil fails it like any other phase.
func (s Status) Monitored() bool { return s.InProgress() }
