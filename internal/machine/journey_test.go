package machine

import (
	"testing"
	"time"
)

// leg is one step of a journey and where it must leave the machine.
type leg struct {
	action Action
	actor  Actor
	erase  EraseMode
	want   expect
}

// travel applies legs in order, a minute apart, checking each against its
// expectation and every step invariant, and returns the final machine.
func travel(t *testing.T, m Machine, legs ...leg) Machine {
	t.Helper()
	cfg := DefaultConfig()
	now := tNow
	for i, l := range legs {
		now = now.Add(time.Minute)
		in := Input{Action: l.action, Actor: l.actor, Now: now, Erase: l.erase}
		out := stepAndCheck(t, m, in, cfg, l.want)
		if t.Failed() {
			t.Fatalf("leg %d (%s from %s) went wrong", i+1, l.action, m.Status)
		}
		if l.want.err != errNone {
			continue // refused: nothing to store
		}
		m = out.Machine
		m.Version++ // as a store would
	}
	return m
}

func as(a Actor, action Action, want expect) leg { return leg{action: action, actor: a, want: want} }

func system(action Action, want expect) leg { return as(SystemActor, action, want) }

func TestJourneyFullLifecycle(t *testing.T) {
	m := fixture(New)
	m = travel(t, m,
		as(adminActor, Commission, goes(Commissioning, pCycle)),
		system(Succeed, goes(Ready, pOff)),
		as(aliceActor, Allocate, goes(Allocated, pNone)),
	)
	if m.Owner != "alice" {
		t.Fatalf("allocated to %q, want alice", m.Owner)
	}
	m = travel(t, m,
		as(aliceActor, Deploy, goes(Deploying, pCycle)),
		system(Heartbeat, goes(Deploying, pNone)),
		system(Succeed, goes(Deployed, pNone)),
	)
	if m.Owner != "alice" || m.OSystem != "ubuntu" || m.DistroSeries != "noble" {
		t.Fatalf("deployed: owner %q, OS %s/%s", m.Owner, m.OSystem, m.DistroSeries)
	}
	m = travel(t, m,
		as(aliceActor, Release, goes(Releasing, pOff)),
		system(Succeed, goes(Ready, pOff)),
	)
	if m.Owner != "" || m.OSystem != "" || m.DistroSeries != "" || !m.StatusExpires.IsZero() {
		t.Errorf("released machine: owner %q, OS %q/%q, deadline %v; want all cleared",
			m.Owner, m.OSystem, m.DistroSeries, m.StatusExpires)
	}
	// Free again: someone else can take it.
	travel(t, m, as(bobActor, Allocate, goes(Allocated, pNone)))
}

func TestJourneyReleaseWithErase(t *testing.T) {
	m := travel(t, fixture(Deployed), leg{action: Release, actor: aliceActor, erase: EraseQuick, want: goes(DiskErasing, pCycle)})
	if m.EraseMode != EraseQuick || m.Owner != "alice" {
		t.Fatalf("erasing: mode %q, owner %q", m.EraseMode, m.Owner)
	}
	m = travel(t, m, system(Succeed, goes(Ready, pOff)))
	if m.EraseMode != EraseNone || m.Owner != "" || m.OSystem != "" {
		t.Errorf("after erase: mode %q, owner %q, OS %q; want all cleared", m.EraseMode, m.Owner, m.OSystem)
	}
}

func TestJourneyEraseFailsThenPlainRelease(t *testing.T) {
	m := travel(t, fixture(Deployed),
		leg{action: Release, actor: aliceActor, erase: EraseSecure, want: goes(DiskErasing, pCycle)},
		system(Fail, goes(FailedDiskErasing, pNone)),
		as(aliceActor, Release, goes(Releasing, pOff)),
		system(Succeed, goes(Ready, pOff)),
	)
	if m.Owner != "" || m.EraseMode != EraseNone {
		t.Errorf("owner %q, erase %q", m.Owner, m.EraseMode)
	}
}

func TestJourneyBrokenWhileDeployed(t *testing.T) {
	m := travel(t, fixture(Deployed),
		as(aliceActor, MarkBroken, goes(Broken, pNone)),
		as(adminActor, MarkFixed, goes(Deployed, pNone)),
	)
	if m.Owner != "alice" || m.OSystem != "ubuntu" {
		t.Errorf("fixed machine: owner %q, OS %q; want alice's deployment kept", m.Owner, m.OSystem)
	}
}

func TestJourneyBrokenWhileReady(t *testing.T) {
	// A free machine has no owner to mark it broken: an admin does.
	travel(t, fixture(Ready), as(aliceActor, MarkBroken, forbidden))
	m := travel(t, fixture(Ready),
		as(adminActor, MarkBroken, goes(Broken, pNone)),
		as(adminActor, MarkFixed, goes(Ready, pNone)),
	)
	if m.Owner != "" {
		t.Errorf("owner %q", m.Owner)
	}
}

// A machine broken before its deployment finished is fixed into the free
// pool, and anyone may take it.
func TestJourneyBrokenWhileAllocatedIsFixedFree(t *testing.T) {
	m := travel(t, fixture(Allocated),
		as(aliceActor, Deploy, goes(Deploying, pCycle)),
		as(aliceActor, MarkBroken, goes(Broken, pNone)),
		as(adminActor, MarkFixed, goes(Ready, pNone)),
		as(bobActor, Allocate, goes(Allocated, pNone)),
	)
	if m.Owner != "bob" {
		t.Errorf("owner %q, want bob", m.Owner)
	}
}

// Commissioning a broken machine that someone owned frees it.
func TestJourneyRecommissionBrokenMachine(t *testing.T) {
	m := travel(t, fixture(Broken),
		as(adminActor, Commission, goes(Commissioning, pCycle)),
		system(Succeed, goes(Ready, pOff)),
	)
	if m.Owner != "" || m.OSystem != "" {
		t.Errorf("owner %q, OS %q; want a free machine", m.Owner, m.OSystem)
	}
}

func TestJourneyAbortDeploying(t *testing.T) {
	m := travel(t, fixture(Allocated),
		as(aliceActor, Deploy, goes(Deploying, pCycle)),
		as(aliceActor, Abort, goes(Allocated, pOff)),
	)
	if m.Owner != "alice" || !m.StatusExpires.IsZero() {
		t.Errorf("owner %q, deadline %v", m.Owner, m.StatusExpires)
	}
	// And it can be deployed again.
	travel(t, m, as(aliceActor, Deploy, goes(Deploying, pCycle)))
}

func TestJourneyAbortCommissioningFromNew(t *testing.T) {
	m := travel(t, fixture(New),
		as(adminActor, Commission, goes(Commissioning, pCycle)),
		as(adminActor, Abort, goes(New, pOff)),
	)
	if !m.StatusExpires.IsZero() {
		t.Errorf("deadline %v left after abort", m.StatusExpires)
	}
	// Aborted is not failed: commissioning starts again.
	travel(t, m, as(adminActor, Commission, goes(Commissioning, pCycle)))
}

func TestJourneyRescueModeFromDeployed(t *testing.T) {
	m := travel(t, fixture(Deployed),
		as(adminActor, EnterRescue, goes(EnteringRescueMode, pCycle)),
		system(Succeed, goes(RescueMode, pNone)),
		as(adminActor, ExitRescue, goes(ExitingRescueMode, pCycle)), // boots its disk again
		system(Succeed, goes(Deployed, pNone)),
	)
	if m.Owner != "alice" || m.OSystem != "ubuntu" {
		t.Errorf("owner %q, OS %q; want alice's deployment kept", m.Owner, m.OSystem)
	}
}

func TestJourneyRescueModeFromReady(t *testing.T) {
	travel(t, fixture(Ready),
		as(adminActor, EnterRescue, goes(EnteringRescueMode, pCycle)),
		system(Succeed, goes(RescueMode, pNone)),
		as(adminActor, ExitRescue, goes(ExitingRescueMode, pOff)), // nothing to boot
		system(Succeed, goes(Ready, pNone)),
	)
}

func TestJourneyRescueEntryFailsThenExit(t *testing.T) {
	travel(t, fixture(Deployed),
		as(adminActor, EnterRescue, goes(EnteringRescueMode, pCycle)),
		system(Fail, goes(FailedEnteringRescueMode, pNone)),
		as(adminActor, ExitRescue, goes(ExitingRescueMode, pCycle)),
		system(Succeed, goes(Deployed, pNone)),
	)
}

func TestJourneyTestFromReady(t *testing.T) {
	travel(t, fixture(Ready),
		as(adminActor, Test, goes(Testing, pCycle)),
		system(Succeed, goes(Ready, pOff)),
	)
}

func TestJourneyTestFromDeployed(t *testing.T) {
	m := travel(t, fixture(Deployed),
		as(adminActor, Test, goes(Testing, pCycle)),
		system(Succeed, goes(Deployed, pNone)),
	)
	if m.Owner != "alice" {
		t.Errorf("owner %q", m.Owner)
	}
}

func TestJourneyTestFailsThenRecommission(t *testing.T) {
	travel(t, fixture(Ready),
		as(adminActor, Test, goes(Testing, pCycle)),
		system(Fail, goes(FailedTesting, pNone)),
		as(adminActor, Commission, goes(Commissioning, pCycle)),
		system(Succeed, goes(Ready, pOff)),
	)
}

func TestJourneyDeployFailsThenRelease(t *testing.T) {
	m := travel(t, fixture(Allocated),
		as(aliceActor, Deploy, goes(Deploying, pCycle)),
		system(Fail, goes(FailedDeployment, pNone)),
		as(aliceActor, Deploy, refused), // release first
		as(aliceActor, Release, goes(Releasing, pOff)),
		system(Succeed, goes(Ready, pOff)),
	)
	if m.Owner != "" {
		t.Errorf("owner %q", m.Owner)
	}
}

// A deployment kept alive by heartbeats outlives its timeout; once they
// stop, the status monitor fails it.
func TestJourneyHeartbeatsThenSilence(t *testing.T) {
	cfg := DefaultConfig()
	start := tNow
	out, err := Step(fixture(Allocated), Input{Action: Deploy, Actor: aliceActor, Now: start}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := out.Machine
	now := start
	for i := 0; i < 5; i++ { // 5 × 50 minutes: well past one 60-minute timeout
		now = now.Add(50 * time.Minute)
		if _, ok := Expire(m, now, cfg); ok {
			t.Fatalf("expired at %s despite heartbeats", now.Sub(start))
		}
		m = stepAndCheck(t, m, Input{Action: Heartbeat, Actor: SystemActor, Now: now}, cfg, goes(Deploying, pNone)).Machine
	}
	if _, ok := Expire(m, now.Add(59*time.Minute), cfg); ok {
		t.Fatalf("expired before a full timeout of silence")
	}
	failed, ok := Expire(m, now.Add(60*time.Minute), cfg)
	if !ok || failed.Machine.Status != FailedDeployment {
		t.Fatalf("after an hour of silence: expired=%v status=%s", ok, failed.Machine.Status)
	}
	// The owner can then release it.
	travel(t, failed.Machine,
		as(aliceActor, Release, goes(Releasing, pOff)),
		system(Succeed, goes(Ready, pOff)),
	)
}
