package machine

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maasStatuses is MAAS's NODE_STATUS: number, identifier and display name
// (maasserver/enum.py, NODE_STATUS_CHOICES). They are API: clients compare
// the numbers and filter on the lower-cased identifiers.
var maasStatuses = []struct {
	status Status
	number int
	key    string
	name   string
}{
	{New, 0, "NEW", "New"},
	{Commissioning, 1, "COMMISSIONING", "Commissioning"},
	{FailedCommissioning, 2, "FAILED_COMMISSIONING", "Failed commissioning"},
	{Missing, 3, "MISSING", "Missing"},
	{Ready, 4, "READY", "Ready"},
	{Reserved, 5, "RESERVED", "Reserved"},
	{Deployed, 6, "DEPLOYED", "Deployed"},
	{Retired, 7, "RETIRED", "Retired"},
	{Broken, 8, "BROKEN", "Broken"},
	{Deploying, 9, "DEPLOYING", "Deploying"},
	{Allocated, 10, "ALLOCATED", "Allocated"},
	{FailedDeployment, 11, "FAILED_DEPLOYMENT", "Failed deployment"},
	{Releasing, 12, "RELEASING", "Releasing"},
	{FailedReleasing, 13, "FAILED_RELEASING", "Releasing failed"},
	{DiskErasing, 14, "DISK_ERASING", "Disk erasing"},
	{FailedDiskErasing, 15, "FAILED_DISK_ERASING", "Failed disk erasing"},
	{RescueMode, 16, "RESCUE_MODE", "Rescue mode"},
	{EnteringRescueMode, 17, "ENTERING_RESCUE_MODE", "Entering rescue mode"},
	{FailedEnteringRescueMode, 18, "FAILED_ENTERING_RESCUE_MODE", "Failed to enter rescue mode"},
	{ExitingRescueMode, 19, "EXITING_RESCUE_MODE", "Exiting rescue mode"},
	{FailedExitingRescueMode, 20, "FAILED_EXITING_RESCUE_MODE", "Failed to exit rescue mode"},
	{Testing, 21, "TESTING", "Testing"},
	{FailedTesting, 22, "FAILED_TESTING", "Failed testing"},
}

func TestStatusNumbersAndNamesMatchMAAS(t *testing.T) {
	if len(AllStatuses) != 23 || len(maasStatuses) != 23 {
		t.Fatalf("%d statuses, want 23", len(AllStatuses))
	}
	for i, tc := range maasStatuses {
		if int(tc.status) != tc.number {
			t.Errorf("%s = %d, want %d", tc.key, int(tc.status), tc.number)
		}
		if AllStatuses[i] != tc.status {
			t.Errorf("AllStatuses[%d] = %s, want %s (numeric order)", i, AllStatuses[i], tc.name)
		}
		if got := tc.status.Key(); got != tc.key {
			t.Errorf("Status(%d).Key() = %q, want %q", tc.number, got, tc.key)
		}
		if got := tc.status.String(); got != tc.name {
			t.Errorf("Status(%d).String() = %q, want %q", tc.number, got, tc.name)
		}
		if !tc.status.Valid() {
			t.Errorf("%s is not Valid", tc.key)
		}
	}
}

func TestStatusOutOfRange(t *testing.T) {
	for _, s := range []Status{-1, 23, 99} {
		if s.Valid() {
			t.Errorf("Status(%d) is Valid", int(s))
		}
		if got, want := s.String(), "Status("+strconv.Itoa(int(s))+")"; got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		if s.Key() != "" {
			t.Errorf("Status(%d).Key() = %q, want empty", int(s), s.Key())
		}
		if s.InProgress() || s.Failed() || s.Monitored() {
			t.Errorf("Status(%d) claims to be in progress, failed or monitored", int(s))
		}
	}
}

func TestParseStatusRoundTrips(t *testing.T) {
	for _, tc := range maasStatuses {
		spellings := []string{
			tc.key,                              // FAILED_DEPLOYMENT
			strings.ToLower(tc.key),             // failed_deployment, as clients filter
			mixCase(tc.key),                     // fAiLeD_dEpLoYmEnT
			tc.name,                             // Failed deployment
			strings.ToLower(tc.name),            // failed deployment
			strings.ToUpper(tc.name),            // FAILED DEPLOYMENT
			strconv.Itoa(tc.number),             // 11
			tc.status.Key(), tc.status.String(), // what we render parses back
		}
		for _, v := range spellings {
			got, err := ParseStatus(v)
			if err != nil {
				t.Errorf("ParseStatus(%q): %v", v, err)
				continue
			}
			if got != tc.status {
				t.Errorf("ParseStatus(%q) = %s, want %s", v, got, tc.name)
			}
		}
	}
}

func mixCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 1 && 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func TestParseStatusRejects(t *testing.T) {
	for _, v := range []string{
		"", " ", "ready ", " 4", "04", "4.0", "-1", "23", "99", "+4",
		"bogus", "FAILED-DEPLOYMENT", "failed_deployment_", "Status(4)",
		"Failed releasing", // MAAS calls it "Releasing failed"
		"rescue", "ENTERING RESCUE", "ｒｅａｄｙ",
	} {
		if s, err := ParseStatus(v); err == nil {
			t.Errorf("ParseStatus(%q) = %s, want an error", v, s)
		} else if !strings.Contains(err.Error(), "unknown status") {
			t.Errorf("ParseStatus(%q) error %q", v, err)
		}
	}
}

// failedTwins is MAAS's NODE_FAILURE_STATUS_TRANSITIONS: every in-progress
// status and the status it fails into.
var failedTwins = map[Status]Status{
	Commissioning:      FailedCommissioning,
	Deploying:          FailedDeployment,
	Releasing:          FailedReleasing,
	DiskErasing:        FailedDiskErasing,
	EnteringRescueMode: FailedEnteringRescueMode,
	ExitingRescueMode:  FailedExitingRescueMode,
	Testing:            FailedTesting,
}

func TestFailedTwinAndClassification(t *testing.T) {
	failed := map[Status]bool{}
	for _, f := range failedTwins {
		failed[f] = true
	}
	for _, s := range AllStatuses {
		want, inProgress := failedTwins[s]
		got, ok := s.FailedTwin()
		if ok != inProgress || got != want {
			t.Errorf("%s.FailedTwin() = %s, %v; want %s, %v", s, got, ok, want, inProgress)
		}
		if s.InProgress() != inProgress {
			t.Errorf("%s.InProgress() = %v, want %v", s, s.InProgress(), inProgress)
		}
		// Anvil monitors every in-progress status, disk erasing included
		// (MAAS leaves erasing without a deadline).
		if s.Monitored() != inProgress {
			t.Errorf("%s.Monitored() = %v, want %v", s, s.Monitored(), inProgress)
		}
		if s.Failed() != failed[s] {
			t.Errorf("%s.Failed() = %v, want %v", s, s.Failed(), failed[s])
		}
		if inProgress && !CanTransition(s, want) {
			t.Errorf("the table forbids %s → %s, its failure", s, want)
		}
	}
	if len(failedTwins) != 7 {
		t.Errorf("%d in-progress statuses, want 7", len(failedTwins))
	}
}

// maasTransitions is MAAS's NODE_TRANSITIONS (maasserver/node_status.py,
// MAAS 3.x), written out so that any difference is a decision listed below.
var maasTransitions = map[Status][]Status{
	New:                 {Commissioning, Testing, Missing, Ready, Retired, Broken, EnteringRescueMode},
	Commissioning:       {FailedCommissioning, Ready, Retired, Missing, New, Broken, Testing},
	FailedCommissioning: {Commissioning, Missing, Retired, Broken, EnteringRescueMode, Testing},
	Ready:               {EnteringRescueMode, Commissioning, Allocated, Reserved, Retired, Missing, Broken, Testing},
	Reserved:            {Ready, Allocated, Retired, Missing, Broken, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Allocated:           {Ready, Retired, Missing, Broken, Deploying, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Releasing: {New, Allocated, Reserved, Deployed, Ready, Broken, Missing, FailedDeployment,
		FailedDiskErasing, FailedReleasing},
	Deploying:                {Allocated, Missing, Broken, FailedDeployment, Deployed, Ready, DiskErasing, Releasing},
	FailedDeployment:         {Allocated, Missing, Broken, Ready, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Deployed:                 {Allocated, Missing, Broken, Ready, DiskErasing, Releasing, EnteringRescueMode, Testing},
	Missing:                  {New, Ready, Allocated, Commissioning, Broken, EnteringRescueMode, Testing},
	Retired:                  {New, Ready, Missing, Broken, EnteringRescueMode, Testing},
	Broken:                   {Commissioning, Ready, DiskErasing, Releasing, EnteringRescueMode, Testing, Deployed},
	FailedReleasing:          {Releasing, DiskErasing, Ready, Broken, Testing},
	DiskErasing:              {Broken, DiskErasing, FailedDiskErasing, Ready, Releasing},
	FailedDiskErasing:        {DiskErasing, Releasing, Broken, Allocated, Ready, EnteringRescueMode, Testing},
	EnteringRescueMode:       {Ready, Broken, Deployed, RescueMode, FailedEnteringRescueMode, ExitingRescueMode},
	FailedEnteringRescueMode: {Broken, EnteringRescueMode, ExitingRescueMode, Testing},
	RescueMode:               {Broken, ExitingRescueMode, Testing},
	ExitingRescueMode: {New, Broken, FailedCommissioning, Ready, Reserved, Allocated, FailedDeployment,
		Deployed, Missing, Retired, FailedReleasing, FailedDiskErasing, RescueMode,
		FailedEnteringRescueMode, FailedExitingRescueMode, FailedTesting},
	FailedExitingRescueMode: {Broken, ExitingRescueMode, Testing},
	Testing: {Broken, New, Ready, Reserved, Allocated, Deployed,
		// NODE_TESTING_RESET_READY_TRANSITIONS:
		New, Commissioning, FailedDeployment, Missing, Retired, Broken, FailedReleasing,
		FailedDiskErasing, FailedEnteringRescueMode, FailedExitingRescueMode, FailedTesting},
	FailedTesting: {Commissioning, Broken, Missing, EnteringRescueMode, Testing, Ready, Deployed},
}

// tableDeviations are where Anvil's table differs from MAAS 3.x's.
var tableDeviations = []struct {
	from, to Status
	anvil    bool // whether Anvil allows it
}{
	{New, Testing, false},          // MAAS 3.x tests New machines; Anvil (like MAAS 2.x) does not
	{Releasing, New, false},        // MAAS 3.x only
	{Releasing, DiskErasing, true}, // in no MAAS table; no Step takes it
}

func TestTransitionTableMatchesMAAS(t *testing.T) {
	deviation := map[[2]Status]bool{}
	for _, d := range tableDeviations {
		deviation[[2]Status{d.from, d.to}] = d.anvil
	}
	for _, from := range AllStatuses {
		maas := map[Status]bool{}
		for _, to := range maasTransitions[from] {
			maas[to] = true
		}
		for _, to := range AllStatuses {
			want := maas[to]
			if d, ok := deviation[[2]Status{from, to}]; ok {
				if d == want {
					t.Errorf("listed deviation %s → %s agrees with MAAS", from, to)
				}
				want = d
			}
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if CanTransition(Status(99), Ready) || CanTransition(Ready, Status(99)) {
		t.Errorf("an unknown status transitions")
	}
}

// Every status is entered by some step, except those that no action puts a
// machine in.
func TestEveryStatusIsReachableByStep(t *testing.T) {
	reached := map[Status]bool{}
	for from, row := range stepTable {
		for _, e := range row {
			if e.err == errNone && e.to != from {
				reached[e.to] = true
			}
		}
	}
	for _, v := range stepVariants { // release with erase enters DiskErasing
		if v.want.err == errNone && v.in.Action == Release {
			reached[v.want.to] = true
		}
	}
	var missing []string
	for _, s := range AllStatuses {
		if !reached[s] {
			missing = append(missing, s.String())
		}
	}
	sort.Strings(missing)
	// Missing, Reserved and Retired are set by other parts of MAAS (the
	// power monitor, reservations, retirement); Anvil's Step has no action
	// that leads there.
	if got, want := strings.Join(missing, ","), "Missing,Reserved,Retired"; got != want {
		t.Errorf("statuses no step reaches: %s, want %s", got, want)
	}
}

func TestTimeoutFor(t *testing.T) {
	def := DefaultConfig()
	custom := Config{Timeout: 10 * time.Minute, ReleasingTimeout: 2 * time.Minute, DeployFactor: 3}
	want := map[Status][2]time.Duration{ // default, custom
		Commissioning:      {30 * time.Minute, 10 * time.Minute},
		Deploying:          {60 * time.Minute, 30 * time.Minute},
		Releasing:          {5 * time.Minute, 2 * time.Minute},
		DiskErasing:        {30 * time.Minute, 10 * time.Minute},
		EnteringRescueMode: {30 * time.Minute, 10 * time.Minute},
		ExitingRescueMode:  {30 * time.Minute, 10 * time.Minute},
		Testing:            {30 * time.Minute, 10 * time.Minute},
	}
	for _, s := range AllStatuses {
		w := want[s] // zero for statuses that are not monitored
		if got := def.TimeoutFor(s); got != w[0] {
			t.Errorf("default TimeoutFor(%s) = %s, want %s", s, got, w[0])
		}
		if got := custom.TimeoutFor(s); got != w[1] {
			t.Errorf("custom TimeoutFor(%s) = %s, want %s", s, got, w[1])
		}
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Timeout != 30*time.Minute || c.ReleasingTimeout != 5*time.Minute || c.DeployFactor != 2 {
		t.Errorf("timeouts = %s/%s/x%d, want MAAS's 30m/5m/x2", c.Timeout, c.ReleasingTimeout, c.DeployFactor)
	}
	if c.DefaultOSystem != "ubuntu" || c.DefaultDistroSeries != "noble" {
		t.Errorf("default OS = %s/%s", c.DefaultOSystem, c.DefaultDistroSeries)
	}
}

func TestActionLists(t *testing.T) {
	user := []Action{Commission, Abort, Allocate, Deploy, Release, MarkBroken, MarkFixed,
		EnterRescue, ExitRescue, Test, PowerOnAction, PowerOffAction}
	names := []string{"commission", "abort", "allocate", "deploy", "release", "mark_broken", "mark_fixed",
		"rescue_mode", "exit_rescue_mode", "test", "power_on", "power_off"}
	if len(UserActions) != len(user) {
		t.Fatalf("UserActions = %v", UserActions)
	}
	for i := range user {
		if UserActions[i] != user[i] || string(user[i]) != names[i] {
			t.Errorf("UserActions[%d] = %q, want %q (MAAS's op name)", i, UserActions[i], names[i])
		}
	}
	if got := SystemActions; len(got) != 4 || got[0] != "succeed" || got[1] != "fail" || got[2] != "heartbeat" || got[3] != "installed" {
		t.Errorf("SystemActions = %v", got)
	}
}

func TestErrorMessages(t *testing.T) {
	te := &TransitionError{Action: Deploy, Status: Deployed}
	if got, want := te.Error(), "cannot deploy a machine in status Deployed"; got != want {
		t.Errorf("TransitionError = %q, want %q", got, want)
	}
	te.Reason = "already deployed"
	if got, want := te.Error(), "cannot deploy a machine in status Deployed: already deployed"; got != want {
		t.Errorf("TransitionError = %q, want %q", got, want)
	}
	fe := &ForbiddenError{Action: Commission, Reason: "an administrator must do this"}
	if got, want := fe.Error(), "not allowed to commission this machine: an administrator must do this"; got != want {
		t.Errorf("ForbiddenError = %q, want %q", got, want)
	}
}

func TestLevels(t *testing.T) {
	order := []Level{LevelDebug, LevelInfo, LevelWarning, LevelError, LevelCritical}
	for i := 1; i < len(order); i++ {
		if order[i-1].Rank() >= order[i].Rank() {
			t.Errorf("%s does not rank below %s", order[i-1], order[i])
		}
	}
	if LevelAudit.Rank() != LevelInfo.Rank() || Level("NOISE").Rank() != 0 {
		t.Errorf("AUDIT ranks %d, unknown ranks %d", LevelAudit.Rank(), Level("NOISE").Rank())
	}
	for _, v := range []string{"error", "ERROR", "Error"} {
		if l, ok := ParseLevel(v); !ok || l != LevelError {
			t.Errorf("ParseLevel(%q) = %q, %v", v, l, ok)
		}
	}
	if l, ok := ParseLevel("fatal"); ok {
		t.Errorf("ParseLevel(fatal) = %q", l)
	}
}
