package machine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// monitoredTimeouts is how long each monitored status may last under the
// default config (MAAS: 30 minutes; releasing 5; deploying twice as long),
// and what it fails into when that runs out.
var monitoredTimeouts = []struct {
	status  Status
	timeout time.Duration
	failsTo Status
}{
	{Commissioning, 30 * time.Minute, FailedCommissioning},
	{Deploying, 60 * time.Minute, FailedDeployment},
	{Releasing, 5 * time.Minute, FailedReleasing},
	{DiskErasing, 30 * time.Minute, FailedDiskErasing},
	{EnteringRescueMode, 30 * time.Minute, FailedEnteringRescueMode},
	{ExitingRescueMode, 30 * time.Minute, FailedExitingRescueMode},
	{Testing, 30 * time.Minute, FailedTesting},
}

// expiring returns the fixture for s, entered at t0 with the deadline cfg
// gives it.
func expiring(s Status, cfg Config) Machine {
	m := fixture(s)
	m.StatusExpires = t0.Add(cfg.TimeoutFor(s))
	return m
}

// expireAndCheck calls Expire on m, checks that m was not mutated and, if
// it expired, that the outcome is a well-formed system failure.
func expireAndCheck(t *testing.T, m Machine, now time.Time, cfg Config) (Outcome, bool) {
	t.Helper()
	snapshot := deepCopy(m)
	out, ok := Expire(m, now, cfg)
	if !reflect.DeepEqual(m, snapshot) {
		t.Fatalf("Expire mutated its input")
	}
	if got := Expired(&m, now); got != ok {
		t.Errorf("Expired = %v but Expire = %v", got, ok)
	}
	if !ok {
		if !reflect.DeepEqual(out, Outcome{}) {
			t.Errorf("Expire reported false with a non-empty Outcome: %+v", out)
		}
		return out, false
	}
	checkInvariants(t, m, Input{Action: Fail, Actor: SystemActor, Now: now}, cfg, out, nil)
	checkNoAliasing(t, m, out.Machine)
	return out, true
}

func TestExpireAroundTheDeadline(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range monitoredTimeouts {
		deadline := t0.Add(tc.timeout)
		for _, at := range []struct {
			name    string
			now     time.Time
			expired bool
		}{
			{"just after entering", t0.Add(time.Second), false},
			{"1ns before", deadline.Add(-time.Nanosecond), false},
			{"at", deadline, true},
			{"1ns after", deadline.Add(time.Nanosecond), true},
			{"a day after", deadline.Add(24 * time.Hour), true},
		} {
			t.Run(fmt.Sprintf("%s/%s", tc.status.Key(), at.name), func(t *testing.T) {
				m := expiring(tc.status, cfg)
				out, ok := expireAndCheck(t, m, at.now, cfg)
				if ok != at.expired {
					t.Fatalf("Expire at %s = %v, want %v", at.now.Sub(t0), ok, at.expired)
				}
				if !ok {
					return
				}
				checkTimedOut(t, m, out, at.now, tc.failsTo, tc.timeout)
			})
		}
	}
}

// checkTimedOut checks what a timed-out machine looks like: failed, with
// the reason in its message and in an ERROR event, nothing else touched.
func checkTimedOut(t *testing.T, m Machine, out Outcome, now time.Time, failsTo Status, timeout time.Duration) {
	t.Helper()
	got := out.Machine
	if got.Status != failsTo {
		t.Errorf("status = %s, want %s", got.Status, failsTo)
	}
	reason := fmt.Sprintf("timed out: no progress reported within %s", timeout)
	if want := m.Status.String() + " failed: " + reason; got.StatusMessage != want {
		t.Errorf("StatusMessage = %q, want %q", got.StatusMessage, want)
	}
	if !got.StatusExpires.IsZero() {
		t.Errorf("a failed status kept a deadline: %v", got.StatusExpires)
	}
	if out.Power != PowerNone {
		t.Errorf("power = %q, want none", out.Power)
	}
	if got.Owner != m.Owner || got.PreviousStatus != m.PreviousStatus {
		t.Errorf("owner/previous changed: %q/%s → %q/%s", m.Owner, m.PreviousStatus, got.Owner, got.PreviousStatus)
	}
	if len(out.Events) != 1 {
		t.Fatalf("%d events, want 1", len(out.Events))
	}
	ev := out.Events[0]
	if ev.Level != LevelError || ev.User != "" || !ev.Created.Equal(now) || ev.SystemID != m.SystemID {
		t.Errorf("event = %+v; want an ERROR event by Anvil at %v for %s", ev, now, m.SystemID)
	}
	if !strings.Contains(ev.Description, reason) {
		t.Errorf("event %q does not carry the reason %q", ev.Description, reason)
	}
}

// The deadline Step arms when a phase starts is the one Expire enforces.
func TestExpireAfterStepArmsDeadline(t *testing.T) {
	cases := []struct {
		from    Status
		in      Input
		phase   Status
		timeout time.Duration
	}{
		{New, Input{Action: Commission, Actor: adminActor}, Commissioning, 30 * time.Minute},
		{Allocated, Input{Action: Deploy, Actor: aliceActor}, Deploying, 60 * time.Minute},
		{Deployed, Input{Action: Release, Actor: aliceActor}, Releasing, 5 * time.Minute},
		{Deployed, Input{Action: Release, Actor: aliceActor, Erase: EraseQuick}, DiskErasing, 30 * time.Minute},
		{Deployed, Input{Action: EnterRescue, Actor: adminActor}, EnteringRescueMode, 30 * time.Minute},
		{RescueMode, Input{Action: ExitRescue, Actor: adminActor}, ExitingRescueMode, 30 * time.Minute},
		{Ready, Input{Action: Test, Actor: adminActor}, Testing, 30 * time.Minute},
	}
	cfg := DefaultConfig()
	for _, tc := range cases {
		t.Run(tc.phase.Key(), func(t *testing.T) {
			in := tc.in
			in.Now = t0
			started, err := Step(fixture(tc.from), in, cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := started.Machine
			if m.Status != tc.phase || !m.StatusExpires.Equal(t0.Add(tc.timeout)) {
				t.Fatalf("entered %s with deadline %v, want %s, %v", m.Status, m.StatusExpires, tc.phase, t0.Add(tc.timeout))
			}
			if _, ok := expireAndCheck(t, m, t0.Add(tc.timeout-time.Second), cfg); ok {
				t.Errorf("expired a second before the deadline")
			}
			out, ok := expireAndCheck(t, m, t0.Add(tc.timeout), cfg)
			if !ok {
				t.Fatalf("did not expire at the deadline")
			}
			twin, _ := tc.phase.FailedTwin()
			checkTimedOut(t, m, out, t0.Add(tc.timeout), twin, tc.timeout)
		})
	}
}

func TestExpireConfigOverride(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timeout = 10 * time.Minute
	cases := []struct {
		status  Status
		timeout time.Duration
	}{
		{Commissioning, 10 * time.Minute},
		{Deploying, 20 * time.Minute}, // DeployFactor 2 × 10m
		{Releasing, 5 * time.Minute},  // ReleasingTimeout is separate
		{DiskErasing, 10 * time.Minute},
		{Testing, 10 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.status.Key(), func(t *testing.T) {
			if got := cfg.TimeoutFor(tc.status); got != tc.timeout {
				t.Fatalf("TimeoutFor = %s, want %s", got, tc.timeout)
			}
			m := expiring(tc.status, cfg)
			if _, ok := expireAndCheck(t, m, t0.Add(tc.timeout-time.Nanosecond), cfg); ok {
				t.Errorf("expired before %s", tc.timeout)
			}
			out, ok := expireAndCheck(t, m, t0.Add(tc.timeout), cfg)
			if !ok {
				t.Fatalf("did not expire at %s", tc.timeout)
			}
			twin, _ := tc.status.FailedTwin()
			checkTimedOut(t, m, out, t0.Add(tc.timeout), twin, tc.timeout)
		})
	}

	// A phase started under the override is armed with it.
	out, err := Step(fixture(New), Input{Action: Commission, Actor: adminActor, Now: t0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(10 * time.Minute); !out.Machine.StatusExpires.Equal(want) {
		t.Errorf("deadline = %v, want %v", out.Machine.StatusExpires, want)
	}
}

func TestHeartbeatExtendsDeadline(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range monitoredTimeouts {
		t.Run(tc.status.Key(), func(t *testing.T) {
			m := expiring(tc.status, cfg) // deadline t0 + timeout
			beat := t0.Add(tc.timeout - time.Minute)
			out := stepAndCheck(t, m, Input{Action: Heartbeat, Actor: SystemActor, Now: beat}, cfg, goes(tc.status, pNone))
			fresh := out.Machine
			if want := beat.Add(tc.timeout); !fresh.StatusExpires.Equal(want) {
				t.Fatalf("deadline after heartbeat = %v, want %v", fresh.StatusExpires, want)
			}
			// The old deadline no longer applies to the fresh machine...
			if _, ok := expireAndCheck(t, fresh, t0.Add(tc.timeout), cfg); ok {
				t.Errorf("expired at the old deadline after a heartbeat")
			}
			if _, ok := expireAndCheck(t, fresh, beat.Add(tc.timeout-time.Nanosecond), cfg); ok {
				t.Errorf("expired before the new deadline")
			}
			// ...but does to a stale copy: the monitor must pass the
			// machine as stored now.
			if _, ok := expireAndCheck(t, m, t0.Add(tc.timeout), cfg); !ok {
				t.Errorf("the stale copy did not expire at its deadline")
			}
			out2, ok := expireAndCheck(t, fresh, beat.Add(tc.timeout), cfg)
			if !ok {
				t.Fatalf("did not expire at the new deadline")
			}
			checkTimedOut(t, fresh, out2, beat.Add(tc.timeout), tc.failsTo, tc.timeout)
		})
	}
}

func TestNonMonitoredStatusesNeverExpire(t *testing.T) {
	cfg := DefaultConfig()
	far := t0.Add(10 * 365 * 24 * time.Hour)
	for _, s := range AllStatuses {
		if s.Monitored() {
			continue
		}
		t.Run(s.Key(), func(t *testing.T) {
			m := fixture(s)
			if _, ok := expireAndCheck(t, m, far, cfg); ok {
				t.Errorf("expired without a deadline")
			}
			// Even a stale deadline left behind is ignored.
			m.StatusExpires = t0
			if _, ok := expireAndCheck(t, m, far, cfg); ok {
				t.Errorf("expired on a stale deadline")
			}
			// And the status has no heartbeat to extend.
			stepAndCheck(t, fixture(s), Input{Action: Heartbeat, Actor: SystemActor, Now: tNow}, cfg, refused)
		})
	}
	if n := len(AllStatuses) - len(monitoredTimeouts); n != 16 {
		t.Errorf("%d non-monitored statuses, want 16", n)
	}
}

// A monitored status without a deadline (not one Step would leave) is not
// expired: Expire needs a deadline to enforce.
func TestMonitoredStatusWithoutDeadline(t *testing.T) {
	for _, tc := range monitoredTimeouts {
		m := fixture(tc.status)
		m.StatusExpires = time.Time{}
		if _, ok := Expire(m, t0.Add(100*365*24*time.Hour), DefaultConfig()); ok {
			t.Errorf("%s without a deadline expired", tc.status)
		}
	}
}
