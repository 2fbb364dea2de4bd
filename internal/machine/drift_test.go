package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Short names for power states, to keep the tables narrow.
const (
	sOn   = PowerOn
	sOff  = PowerOff
	sNone = PowerState("")
)

// driftMachine is a minimal machine in status s. ExitingRescueMode returns
// to Deployed unless prev says otherwise.
func driftMachine(s Status) Machine {
	m := Machine{SystemID: "x7ykqe", Hostname: "node-01", Status: s, PreviousStatus: Ready, Owner: "alice",
		Tags: []string{"gpu"}, Updated: t0}
	if s == ExitingRescueMode || s == RescueMode || s == EnteringRescueMode {
		m.PreviousStatus = Deployed
	}
	return m
}

func userAsk(a PowerAction, s Status) PowerWatch {
	return PowerWatch{LastAsk: PowerAsk{Action: a, By: AskedByUser, Status: s, At: t0}}
}

// expectedPowerTable is ExpectedPower for every status when nothing was
// asked, when a user asked power_on in that status, and when a user asked
// power_off in that status.
var expectedPowerTable = map[Status][3]PowerState{
	//                          nothing, on,  off
	New:                      {sNone, sOn, sOff},
	Commissioning:            {sOn, sOn, sOn}, // the phase needs it on
	FailedCommissioning:      {sNone, sOn, sOff},
	Missing:                  {sNone, sOn, sOff},
	Ready:                    {sNone, sOn, sOff},
	Reserved:                 {sNone, sOn, sOff},
	Deployed:                 {sOn, sOn, sOff}, // on, unless the owner switched it off
	Retired:                  {sNone, sOn, sOff},
	Broken:                   {sNone, sOn, sOff},
	Deploying:                {sOn, sOn, sOn},
	Allocated:                {sNone, sOn, sOff},
	FailedDeployment:         {sNone, sOn, sOff},
	Releasing:                {sOff, sOff, sOff}, // releasing is the power-off
	FailedReleasing:          {sNone, sOn, sOff},
	DiskErasing:              {sOn, sOn, sOn},
	FailedDiskErasing:        {sNone, sOn, sOff},
	RescueMode:               {sOn, sOn, sOn},
	EnteringRescueMode:       {sOn, sOn, sOn},
	FailedEnteringRescueMode: {sNone, sOn, sOff},
	ExitingRescueMode:        {sOn, sOn, sOn}, // back to Deployed: cycled onto its disk
	FailedExitingRescueMode:  {sNone, sOn, sOff},
	Testing:                  {sOn, sOn, sOn},
	FailedTesting:            {sNone, sOn, sOff},
}

func TestExpectedPowerAllStatuses(t *testing.T) {
	if len(expectedPowerTable) != len(AllStatuses) {
		t.Fatalf("table has %d statuses, want %d", len(expectedPowerTable), len(AllStatuses))
	}
	for _, s := range AllStatuses {
		want, ok := expectedPowerTable[s]
		if !ok {
			t.Errorf("no row for %s", s)
			continue
		}
		watches := [3]PowerWatch{{}, userAsk(PowerUp, s), userAsk(PowerDown, s)}
		for i, w := range watches {
			if got := ExpectedPower(driftMachine(s), w); got != want[i] {
				t.Errorf("%s with ask %q: got %q, want %q", s, w.LastAsk.Action, got, want[i])
			}
		}
	}
}

func TestExpectedPowerAskScope(t *testing.T) {
	ask := func(a PowerAction, by AskSource, s Status) PowerWatch {
		return PowerWatch{LastAsk: PowerAsk{Action: a, By: by, Status: s, At: t0}}
	}
	exiting := func(prev Status) Machine { m := driftMachine(ExitingRescueMode); m.PreviousStatus = prev; return m }
	cases := []struct {
		name string
		m    Machine
		w    PowerWatch
		want PowerState
	}{
		{"deployed: off asked before deploying does not count", driftMachine(Deployed), ask(PowerDown, AskedByUser, Allocated), sOn},
		{"deployed: off asked by the lifecycle while deployed", driftMachine(Deployed), ask(PowerDown, AskedByLifecycle, Deployed), sOff},
		{"deployed: found off at adoption", driftMachine(Deployed), ask(PowerDown, AskedAtAdoption, Deployed), sOff},
		{"deployed: cycle while deployed", driftMachine(Deployed), ask(PowerRestart, AskedByUser, Deployed), sOn},
		{"deployed: a query is not an ask", driftMachine(Deployed), ask("query", AskedByUser, Deployed), sOn},
		{"deployed: off asked in testing, passed back to deployed", driftMachine(Deployed), ask(PowerDown, AskedByUser, Testing), sOn},
		{"ready: lifecycle off (commissioning done) is no expectation", driftMachine(Ready), ask(PowerDown, AskedByLifecycle, Ready), sNone},
		{"ready: adoption is no expectation", driftMachine(Ready), ask(PowerDown, AskedAtAdoption, Ready), sNone},
		{"allocated: on asked while ready is dropped", driftMachine(Allocated), ask(PowerUp, AskedByUser, Ready), sNone},
		{"broken: off asked while deployed is dropped", driftMachine(Broken), ask(PowerDown, AskedByUser, Deployed), sNone},
		{"ready: user cycle means on", driftMachine(Ready), ask(PowerRestart, AskedByUser, Ready), sOn},
		{"ready: a query is not an ask", driftMachine(Ready), ask("query", AskedByUser, Ready), sNone},
		{"deploying: the phase wins over a user's off", driftMachine(Deploying), ask(PowerDown, AskedByUser, Deploying), sOn},
		{"releasing: the phase wins over a user's on", driftMachine(Releasing), ask(PowerUp, AskedByUser, Releasing), sOff},
		{"exiting rescue to deployed", exiting(Deployed), PowerWatch{}, sOn},
		{"exiting rescue to ready", exiting(Ready), PowerWatch{}, sOff},
		{"exiting rescue to allocated", exiting(Allocated), PowerWatch{}, sOff},
		{"exiting rescue to broken", exiting(Broken), PowerWatch{}, sOff},
	}
	for _, c := range cases {
		if got := ExpectedPower(c.m, c.w); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExpectedPowerFollowsStep walks a machine through its life with Step,
// noting each power ask as the region would, and checks what is expected.
func TestExpectedPowerFollowsStep(t *testing.T) {
	cfg := DefaultConfig()
	m := Machine{SystemID: "x7ykqe", Hostname: "node-01", Status: Ready, PowerState: PowerOff}
	w := AdoptPowerWatch(m, t0)
	now := t0
	steps := []struct {
		action Action
		actor  Actor
		status Status
		want   PowerState
	}{
		{Deploy, aliceActor, Deploying, sOn},
		{Succeed, SystemActor, Deployed, sOn},
		{PowerOffAction, aliceActor, Deployed, sOff},
		{MarkBroken, aliceActor, Broken, sNone},
		{MarkFixed, adminActor, Deployed, sOff}, // same deployment, still switched off
		{PowerOnAction, aliceActor, Deployed, sOn},
		{Test, adminActor, Testing, sOn},
		{Succeed, SystemActor, Deployed, sOn},
		{EnterRescue, adminActor, EnteringRescueMode, sOn},
		{Succeed, SystemActor, RescueMode, sOn},
		{ExitRescue, adminActor, ExitingRescueMode, sOn},
		{Succeed, SystemActor, Deployed, sOn},
		{Release, aliceActor, Releasing, sOff},
		{Succeed, SystemActor, Ready, sNone}, // the lifecycle's off is no expectation
		{PowerOnAction, adminActor, Ready, sOn},
		{Commission, adminActor, Commissioning, sOn},
		{Succeed, SystemActor, Ready, sNone},
	}
	for i, s := range steps {
		now = now.Add(time.Minute)
		in := Input{Action: s.action, Actor: s.actor, Now: now}
		out, err := Step(m, in, cfg)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.action, err)
		}
		m, w = out.Machine, NoteStep(w, in, out)
		if m.Status != s.status {
			t.Fatalf("step %d (%s): status %s, want %s", i, s.action, m.Status, s.status)
		}
		if got := ExpectedPower(m, w); got != s.want {
			t.Errorf("step %d (%s → %s): expected %q, want %q (last ask %+v)", i, s.action, m.Status, got, s.want, w.LastAsk)
		}
	}
}

func TestNoteStepSource(t *testing.T) {
	in := Input{Action: PowerOffAction, Actor: aliceActor, Now: tNow}
	out, err := Step(fixture(Deployed), in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got := NoteStep(PowerWatch{}, in, out).LastAsk
	if want := (PowerAsk{Action: PowerDown, By: AskedByUser, Status: Deployed, At: tNow}); got != want {
		t.Errorf("power_off: %+v, want %+v", got, want)
	}
	in = Input{Action: Release, Actor: aliceActor, Now: tNow}
	out, err = Step(fixture(Deployed), in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	got = NoteStep(PowerWatch{}, in, out).LastAsk
	if want := (PowerAsk{Action: PowerDown, By: AskedByLifecycle, Status: Releasing, At: tNow}); got != want {
		t.Errorf("release: %+v, want %+v", got, want)
	}
	// A step without power leaves the watch alone.
	in = Input{Action: MarkBroken, Actor: aliceActor, Now: tNow}
	out, err = Step(fixture(Deployed), in, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := userAsk(PowerUp, Deployed)
	if got := NoteStep(w, in, out); !reflect.DeepEqual(got, w) {
		t.Errorf("mark_broken changed the watch: %+v", got)
	}
}

func TestNoteAsked(t *testing.T) {
	w := PowerWatch{Observed: sOff, Candidate: sOn, Drift: true, DriftSince: t0, Reason: "power drift",
		Corrections: []time.Time{t0}, Failures: 2}
	snap := deepCopyWatch(w)
	a := PowerAsk{Action: PowerUp, By: AskedByUser, Status: Deployed, At: tNow}
	got := NoteAsked(w, a)
	if !reflect.DeepEqual(w, snap) {
		t.Fatalf("NoteAsked mutated its input")
	}
	want := PowerWatch{Observed: sOff, LastAsk: a, Corrections: []time.Time{t0}, Failures: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	got.Corrections[0] = tNow
	if !w.Corrections[0].Equal(t0) {
		t.Errorf("NoteAsked's result aliases its input")
	}
	for _, a := range []PowerAction{PowerNone, "query"} {
		if got := NoteAsked(w, PowerAsk{Action: a, At: tNow}); !reflect.DeepEqual(got, w) {
			t.Errorf("NoteAsked(%q) changed the watch: %+v", a, got)
		}
	}
}

func TestAdoptPowerWatch(t *testing.T) {
	cases := []struct {
		status   Status
		state    PowerState
		observed PowerState
		expected PowerState
	}{
		{Deployed, sOff, sOff, sOff}, // found off: stays off
		{Deployed, sOn, sOn, sOn},
		{Deployed, PowerUnknown, sNone, sOn},
		{Ready, sOn, sOn, sNone},
		{Ready, sOff, sOff, sNone},
		{Deploying, sOff, sOff, sOn},
		{Broken, PowerError, sNone, sNone},
	}
	for _, c := range cases {
		m := driftMachine(c.status)
		m.PowerState = c.state
		w := AdoptPowerWatch(m, t0)
		if w.Observed != c.observed {
			t.Errorf("%s/%s: observed %q, want %q", c.status, c.state, w.Observed, c.observed)
		}
		if got := ExpectedPower(m, w); got != c.expected {
			t.Errorf("%s/%s: expected %q, want %q", c.status, c.state, got, c.expected)
		}
	}
	// Adopting a deployed machine that is off must not power it on.
	m := driftMachine(Deployed)
	m.PowerState = PowerOff
	w := AdoptPowerWatch(m, t0)
	for i := range 5 {
		var d DriftDecision
		w, d = Observe(m, w, Reading{State: sOff, At: t0.Add(time.Duration(i+5) * time.Minute)}, DefaultDriftConfig())
		if d.Correct != PowerNone || w.Drift || len(d.Events) > 0 {
			t.Fatalf("reading %d: %+v %+v", i, d, w)
		}
	}
}

func TestParseAndResolveDriftPolicy(t *testing.T) {
	for in, want := range map[string]DriftPolicy{"": InheritDrift, "enforce": Enforce, "WARN": Warn, "Enforce": Enforce} {
		got, err := ParseDriftPolicy(in)
		if err != nil || got != want {
			t.Errorf("ParseDriftPolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"off", "ignore", "enforced", " warn"} {
		if _, err := ParseDriftPolicy(in); err == nil {
			t.Errorf("ParseDriftPolicy(%q) accepted", in)
		}
	}
	cases := []struct{ machine, pool, want DriftPolicy }{
		{"", "", Enforce},
		{"", Warn, Warn},
		{"", Enforce, Enforce},
		{Warn, Enforce, Warn},
		{Enforce, Warn, Enforce},
		{Warn, "", Warn},
	}
	for _, c := range cases {
		if got := ResolveDriftPolicy(c.machine, c.pool); got != c.want {
			t.Errorf("ResolveDriftPolicy(%q, %q) = %q, want %q", c.machine, c.pool, got, c.want)
		}
	}
}

// deepCopyWatch copies a watch without using the code under test.
func deepCopyWatch(w PowerWatch) PowerWatch {
	if w.Corrections != nil {
		w.Corrections = append(make([]time.Time, 0, len(w.Corrections)), w.Corrections...)
	}
	return w
}

// observe runs Observe and checks what must hold for every call: the
// inputs are not mutated nor aliased, the events are complete and dated by
// the reading, and the decision is consistent.
func observe(t *testing.T, m Machine, w PowerWatch, r Reading, cfg DriftConfig) (PowerWatch, DriftDecision) {
	t.Helper()
	mSnap, wSnap := deepCopy(m), deepCopyWatch(w)
	got, d := Observe(m, w, r, cfg)
	if !reflect.DeepEqual(m, mSnap) {
		t.Fatalf("Observe mutated the machine")
	}
	if !reflect.DeepEqual(w, wSnap) {
		t.Fatalf("Observe mutated the watch:\n got %+v\nwant %+v", w, wSnap)
	}
	if len(got.Corrections) > 0 && len(w.Corrections) > 0 {
		saved := got.Corrections[0]
		got.Corrections[0] = time.Time{}
		if !reflect.DeepEqual(w, wSnap) {
			t.Fatalf("Observe's result aliases the input's Corrections")
		}
		got.Corrections[0] = saved
	}
	if !got.ReadAt.Equal(r.At) {
		t.Errorf("ReadAt = %v, want %v", got.ReadAt, r.At)
	}
	for i, ev := range d.Events {
		if ev.SystemID != m.SystemID || ev.Hostname != m.Hostname || ev.User != "" || ev.ID != 0 {
			t.Errorf("event %d names %q/%q/%q id %d", i, ev.SystemID, ev.Hostname, ev.User, ev.ID)
		}
		if !ev.Created.Equal(r.At) {
			t.Errorf("event %d created %v, want %v", i, ev.Created, r.At)
		}
		if ev.Type == "" || ev.Description == "" || ev.Level.Rank() == 0 {
			t.Errorf("event %d is incomplete: %+v", i, ev)
		}
	}
	if d.Correct != PowerNone && d.Correct != PowerUp && d.Correct != PowerDown {
		t.Errorf("Correct = %q", d.Correct)
	}
	if d.Correct != PowerNone && (d.FailPhase != "" || d.Flag) {
		t.Errorf("a correction with FailPhase %q / Flag %v", d.FailPhase, d.Flag)
	}
	if (d.Flag || d.Correct != PowerNone || d.FailPhase != "") && !got.Drift {
		t.Errorf("a drift decision without Drift: %+v", d)
	}
	if got.Drift != (got.Reason != "") {
		t.Errorf("Drift %v with Reason %q", got.Drift, got.Reason)
	}
	if got.Drift && got.DriftSince.IsZero() {
		t.Errorf("Drift without DriftSince")
	}
	return got, d
}

type step struct {
	state PowerState
	err   error
}

func TestDebounce(t *testing.T) {
	bmcDown := errors.New("connection refused")
	cases := []struct {
		name     string
		start    PowerState // Observed before the readings
		readings []step
		observed []PowerState // Observed after each reading
		failures []int
	}{
		{"first state needs two readings", sNone, []step{{sOn, nil}, {sOn, nil}}, []PowerState{sNone, sOn}, []int{0, 0}},
		{"on, on from off", sOff, []step{{sOn, nil}, {sOn, nil}}, []PowerState{sOff, sOn}, []int{0, 0}},
		{"off, off from on", sOn, []step{{sOff, nil}, {sOff, nil}}, []PowerState{sOn, sOff}, []int{0, 0}},
		{"a single glitch is ignored", sOn, []step{{sOff, nil}, {sOn, nil}, {sOff, nil}, {sOn, nil}}, []PowerState{sOn, sOn, sOn, sOn}, []int{0, 0, 0, 0}},
		{"flapping never confirms", sNone, []step{{sOn, nil}, {sOff, nil}, {sOn, nil}, {sOff, nil}}, []PowerState{sNone, sNone, sNone, sNone}, []int{0, 0, 0, 0}},
		{"errors count and change nothing", sOn, []step{{"", bmcDown}, {sOff, bmcDown}, {PowerError, nil}, {PowerUnknown, nil}, {"", nil}},
			[]PowerState{sOn, sOn, sOn, sOn, sOn}, []int{1, 2, 3, 4, 5}},
		{"an error between two agreeing readings does not break them", sOn, []step{{sOff, nil}, {"", bmcDown}, {sOff, nil}},
			[]PowerState{sOn, sOn, sOff}, []int{0, 1, 0}},
		{"a good reading resets failures", sOff, []step{{"", bmcDown}, {"", bmcDown}, {sOff, nil}, {"", bmcDown}},
			[]PowerState{sOff, sOff, sOff, sOff}, []int{1, 2, 0, 1}},
		{"errors never make a first state", sNone, []step{{PowerUnknown, nil}, {PowerUnknown, nil}, {PowerError, nil}},
			[]PowerState{sNone, sNone, sNone}, []int{1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := driftMachine(Ready) // no expectation: debounce alone
			w := PowerWatch{Observed: c.start}
			for i, s := range c.readings {
				at := t0.Add(time.Duration(i) * time.Minute)
				var d DriftDecision
				w, d = observe(t, m, w, Reading{State: s.state, Err: s.err, At: at}, DefaultDriftConfig())
				if w.Observed != c.observed[i] || w.Failures != c.failures[i] {
					t.Fatalf("after reading %d (%q, %v): observed %q failures %d, want %q %d",
						i, s.state, s.err, w.Observed, w.Failures, c.observed[i], c.failures[i])
				}
				if d.Correct != PowerNone || d.FailPhase != "" || d.Flag || w.Drift {
					t.Fatalf("reading %d: a machine without expectation drifted: %+v", i, d)
				}
				if (w.Failures > 0) != (w.ReadError != "") {
					t.Errorf("reading %d: failures %d with ReadError %q", i, w.Failures, w.ReadError)
				}
			}
		})
	}
}

func TestObservedChangeEvents(t *testing.T) {
	m := driftMachine(Ready)
	w := PowerWatch{}
	cfg := DefaultDriftConfig()
	var d DriftDecision
	seq := []struct {
		state PowerState
		event string
	}{
		{sOn, ""}, {sOn, ""}, // the first confirmed state is not a change
		{sOff, ""}, {sOff, "Power is now off (was on)"},
		{sOff, ""}, {sOn, ""}, {sOn, "Power is now on (was off)"},
	}
	for i, s := range seq {
		w, d = observe(t, m, w, Reading{State: s.state, At: t0.Add(time.Duration(i) * time.Minute)}, cfg)
		var got []string
		for _, ev := range d.Events {
			got = append(got, ev.Description)
			if ev.Level != LevelInfo || ev.Type != "Power state" {
				t.Errorf("reading %d: event %+v", i, ev)
			}
		}
		if want := []string(nil); s.event != "" {
			want = []string{s.event}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("reading %d: events %q, want %q", i, got, want)
			}
		} else if len(got) > 0 {
			t.Errorf("reading %d: unexpected events %q", i, got)
		}
	}
}

func TestFailedReadingEvents(t *testing.T) {
	m := driftMachine(Deployed)
	w := PowerWatch{Observed: sOn, Expected: sOn}
	cfg := DefaultDriftConfig()
	down := errors.New("no route to host")
	var d DriftDecision
	for i := 1; i <= 6; i++ {
		w, d = observe(t, m, w, Reading{Err: down, At: t0.Add(time.Duration(i) * time.Minute)}, cfg)
		want := 0
		if i == cfg.FailuresToWarn {
			want = 1
		}
		if len(d.Events) != want {
			t.Fatalf("failure %d: %d events, want %d: %+v", i, len(d.Events), want, d.Events)
		}
		if want == 1 && (d.Events[0].Level != LevelWarning || !strings.Contains(d.Events[0].Description, "no route to host")) {
			t.Errorf("failure event: %+v", d.Events[0])
		}
		if d.Correct != PowerNone || w.Drift {
			t.Errorf("failure %d decided something: %+v", i, d)
		}
	}
	w, d = observe(t, m, w, Reading{State: sOn, At: t0.Add(10 * time.Minute)}, cfg)
	if len(d.Events) != 1 || d.Events[0].Level != LevelInfo || !strings.Contains(d.Events[0].Description, "6 failed") {
		t.Errorf("recovery events: %+v", d.Events)
	}
	if w.Failures != 0 || w.ReadError != "" {
		t.Errorf("recovery left failures %d %q", w.Failures, w.ReadError)
	}
	// Fewer failures than the threshold make no events either way.
	w, _ = observe(t, m, w, Reading{Err: down, At: t0.Add(11 * time.Minute)}, cfg)
	if _, d = observe(t, m, w, Reading{State: sOn, At: t0.Add(12 * time.Minute)}, cfg); len(d.Events) != 0 {
		t.Errorf("a single failure's recovery made events: %+v", d.Events)
	}
}

// deployedOn is a deployed machine Anvil has watched for a while: on, as
// expected, nothing asked recently.
func deployedOn() (Machine, PowerWatch) {
	return driftMachine(Deployed), PowerWatch{Observed: sOn, Expected: sOn, ReadAt: t0}
}

func eventTypes(evs []Event) []string {
	var ts []string
	for _, ev := range evs {
		ts = append(ts, ev.Type)
	}
	return ts
}

func TestEnforceDeployedGoesOff(t *testing.T) {
	m, w := deployedOn()
	cfg := DefaultDriftConfig()
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

	// First off reading: debounce, nothing yet.
	w, d := observe(t, m, w, Reading{State: sOff, At: at(1)}, cfg)
	if d.Correct != PowerNone || len(d.Events) != 0 || w.Drift || w.Candidate != sOff {
		t.Fatalf("first reading: %+v / %+v", d, w)
	}
	// Second: drift, corrected.
	w, d = observe(t, m, w, Reading{State: sOff, At: at(2)}, cfg)
	if d.Correct != PowerUp || !w.Drift || !w.DriftSince.Equal(at(2)) || d.Flag {
		t.Fatalf("second reading: %+v / %+v", d, w)
	}
	if got, want := eventTypes(d.Events), []string{"Power state", "Power drift"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if ev := d.Events[1]; ev.Level != LevelWarning || !strings.Contains(ev.Description, "off while Deployed; expected on") ||
		!strings.Contains(ev.Description, "powering it on") {
		t.Errorf("drift event: %+v", ev)
	}
	if !slices.Equal(w.Corrections, []time.Time{at(2)}) {
		t.Errorf("corrections %v", w.Corrections)
	}
	// Within grace of the correction: the BMC may lag; nothing happens.
	w, d = observe(t, m, w, Reading{State: sOff, At: at(3)}, cfg)
	if d.Correct != PowerNone || len(d.Events) != 0 || !w.Drift {
		t.Fatalf("within grace: %+v / %+v", d, w)
	}
	// The correction worked: on, on → drift cleared, one INFO event. The
	// first "on" comes after the grace, while the debounced state is still
	// off: the machine is on its way back, so no second correction.
	w, d = observe(t, m, w, Reading{State: sOn, At: at(4)}, cfg)
	if d.Correct != PowerNone || len(d.Events) != 0 || !w.Drift || len(w.Corrections) != 1 {
		t.Fatalf("first reading back: %+v / %+v", d, w)
	}
	w, d = observe(t, m, w, Reading{State: sOn, At: at(5)}, cfg)
	if w.Drift || d.Correct != PowerNone {
		t.Fatalf("after recovery: %+v / %+v", d, w)
	}
	if got, want := eventTypes(d.Events), []string{"Power state", "Power drift cleared"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if !strings.Contains(d.Events[1].Description, "drifted for 3m0s") {
		t.Errorf("cleared event: %q", d.Events[1].Description)
	}
}

func TestEnforceRetriesAfterGraceWhileDriftPersists(t *testing.T) {
	m, w := deployedOn()
	cfg := DefaultDriftConfig()
	var d DriftDecision
	corrections := 0
	for i := 1; i <= 12; i++ { // a reading a minute, the machine never comes back
		w, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Duration(i) * time.Minute)}, cfg)
		if d.Correct == PowerUp {
			corrections++
		}
	}
	// Corrections at 2, 4 and 6 minutes (grace is 2 minutes), the guard
	// trips at 8, warnings only after that.
	if corrections != 3 || w.GuardTripped.IsZero() || !w.GuardTripped.Equal(t0.Add(8*time.Minute)) {
		t.Errorf("corrections %d, guard tripped %v", corrections, w.GuardTripped)
	}
	if !d.Flag || d.Correct != PowerNone || len(d.Events) != 0 {
		t.Errorf("after the guard: %+v", d)
	}
}

func TestGraceAfterAsk(t *testing.T) {
	cfg := DefaultDriftConfig()
	m, w := deployedOn()
	// The owner switches it off through Anvil: expected off from now on,
	// and the readings still saying on during the grace are no drift.
	w = NoteAsked(w, PowerAsk{Action: PowerDown, By: AskedByUser, Status: Deployed, At: t0})
	for _, sec := range []int{30, 60, 90, 119} {
		var d DriftDecision
		w, d = observe(t, m, w, Reading{State: sOn, At: t0.Add(time.Duration(sec) * time.Second)}, cfg)
		if w.Drift || d.Correct != PowerNone || d.Flag {
			t.Fatalf("%ds after the ask: %+v / %+v", sec, d, w)
		}
	}
	// Past the grace, a machine that is still on has drifted: power it off.
	w, d := observe(t, m, w, Reading{State: sOn, At: t0.Add(2 * time.Minute)}, cfg)
	if !w.Drift || d.Correct != PowerDown {
		t.Fatalf("after grace: %+v / %+v", d, w)
	}
	// A machine that did go off within the grace is simply observed off.
	m, w = deployedOn()
	w = NoteAsked(w, PowerAsk{Action: PowerDown, By: AskedByUser, Status: Deployed, At: t0})
	w, _ = observe(t, m, w, Reading{State: sOff, At: t0.Add(30 * time.Second)}, cfg)
	w, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(60 * time.Second)}, cfg)
	if w.Drift || w.Observed != sOff || w.Expected != sOff || d.Correct != PowerNone {
		t.Fatalf("asked off and went off: %+v / %+v", d, w)
	}
	for i := 2; i < 10; i++ {
		w, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Duration(i) * time.Minute)}, cfg)
		if w.Drift || len(d.Events) != 0 {
			t.Fatalf("stays off as asked: %+v / %+v", d, w)
		}
	}
}

func TestNoteAskedClearsDrift(t *testing.T) {
	cfg := DefaultDriftConfig()
	cfg.Policy = Warn
	m, w := deployedOn()
	w, _ = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Minute)}, cfg)
	w, d := observe(t, m, w, Reading{State: sOff, At: t0.Add(2 * time.Minute)}, cfg)
	if !w.Drift || !d.Flag {
		t.Fatalf("no drift: %+v", w)
	}
	w = NoteAsked(w, PowerAsk{Action: PowerUp, By: AskedByUser, Status: Deployed, At: t0.Add(3 * time.Minute)})
	if w.Drift || w.Candidate != "" || w.Reason != "" || !w.DriftSince.IsZero() {
		t.Fatalf("NoteAsked left drift: %+v", w)
	}
	// Still off after the grace: a new drift, with its own event.
	w, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(6 * time.Minute)}, cfg)
	if !w.Drift || !d.Flag || len(d.Events) != 1 || d.Events[0].Type != "Power drift" {
		t.Fatalf("new drift: %+v / %+v", d, w)
	}
}

// flap drives one drift episode on a deployed machine: off, off, then (if
// back) on, on, a minute apart from start. It returns the decisions of the
// second off reading and the watch after the episode.
func flap(t *testing.T, m Machine, w PowerWatch, cfg DriftConfig, start time.Time, back bool) (PowerWatch, DriftDecision) {
	t.Helper()
	w, _ = observe(t, m, w, Reading{State: sOff, At: start}, cfg)
	w, d := observe(t, m, w, Reading{State: sOff, At: start.Add(time.Minute)}, cfg)
	if back {
		w, _ = observe(t, m, w, Reading{State: sOn, At: start.Add(2 * time.Minute)}, cfg)
		var cleared DriftDecision
		w, cleared = observe(t, m, w, Reading{State: sOn, At: start.Add(3 * time.Minute)}, cfg)
		if w.Drift || !slices.Contains(eventTypes(cleared.Events), "Power drift cleared") {
			t.Fatalf("episode at %v did not clear: %+v", start, cleared)
		}
	}
	return w, d
}

func TestFlapGuard(t *testing.T) {
	m, w := deployedOn()
	cfg := DefaultDriftConfig()
	start := t0
	var d DriftDecision
	for i := range 3 {
		w, d = flap(t, m, w, cfg, start, true)
		if d.Correct != PowerUp || d.Flag {
			t.Fatalf("correction %d: %+v", i+1, d)
		}
		if !strings.Contains(d.Events[len(d.Events)-1].Description, fmt.Sprintf("correction %d of 3", i+1)) {
			t.Errorf("correction %d event: %q", i+1, d.Events[len(d.Events)-1].Description)
		}
		start = start.Add(10 * time.Minute)
	}
	// The fourth drift within the hour trips the guard.
	w, d = flap(t, m, w, cfg, start, false)
	if d.Correct != PowerNone || !d.Flag || w.GuardTripped.IsZero() {
		t.Fatalf("guard did not trip: %+v / %+v", d, w)
	}
	ev := d.Events[len(d.Events)-1]
	if ev.Type != "Power drift guard" || ev.Level != LevelWarning ||
		!strings.Contains(ev.Description, "3 corrections in the last 1h0m0s") ||
		!strings.Contains(ev.Description, "stops powering this machine on") ||
		!strings.Contains(ev.Description, "set the drift policy to enforce again") {
		t.Errorf("guard event: %+v", ev)
	}
	if !strings.Contains(w.Reason, "flap guard tripped after 3 corrections") {
		t.Errorf("reason at the trip: %q", w.Reason)
	}
	tripped := w.GuardTripped
	w, _ = observe(t, m, w, Reading{State: sOn, At: start.Add(2 * time.Minute)}, cfg)
	w, d = observe(t, m, w, Reading{State: sOn, At: start.Add(3 * time.Minute)}, cfg)
	if w.Drift || !slices.Contains(eventTypes(d.Events), "Power drift cleared") {
		t.Fatalf("guard episode did not clear: %+v", d)
	}
	// Later drifts behave as warn: flag and one event, no correction,
	// even long after the window.
	for _, later := range []time.Duration{10 * time.Minute, 3 * time.Hour} {
		start = start.Add(later)
		w, d = flap(t, m, w, cfg, start, false)
		if d.Correct != PowerNone || !d.Flag || !slices.Contains(eventTypes(d.Events), "Power drift") {
			t.Fatalf("after the guard: %+v", d)
		}
		if !strings.Contains(w.Reason, "flap guard") {
			t.Errorf("reason does not say why: %q", w.Reason)
		}
		w, d = observe(t, m, w, Reading{State: sOff, At: start.Add(2 * time.Minute)}, cfg)
		if d.Correct != PowerNone || !d.Flag || len(d.Events) != 0 {
			t.Fatalf("persistent drift after the guard: %+v", d)
		}
		w, _ = observe(t, m, w, Reading{State: sOn, At: start.Add(3 * time.Minute)}, cfg)
		w, _ = observe(t, m, w, Reading{State: sOn, At: start.Add(4 * time.Minute)}, cfg)
		if !w.GuardTripped.Equal(tripped) {
			t.Errorf("GuardTripped moved to %v", w.GuardTripped)
		}
	}
	// The operator sets enforce again: corrections resume.
	snap := deepCopyWatch(w)
	reset := ResetGuard(w)
	if !reflect.DeepEqual(w, snap) {
		t.Fatalf("ResetGuard mutated its input")
	}
	if !reset.GuardTripped.IsZero() || len(reset.Corrections) != 0 {
		t.Fatalf("ResetGuard left %+v", reset)
	}
	start = start.Add(10 * time.Minute)
	_, d = flap(t, m, reset, cfg, start, false)
	if d.Correct != PowerUp || d.Flag {
		t.Fatalf("after ResetGuard: %+v", d)
	}
}

func TestFlapGuardWindow(t *testing.T) {
	cfg := DefaultDriftConfig()
	cases := []struct {
		fourth  time.Duration // when the fourth drift is confirmed, after the first correction
		correct bool
	}{
		{30 * time.Minute, false},
		{59*time.Minute + 59*time.Second, false},
		{time.Hour, true}, // the first correction is an hour old: it no longer counts
		{2 * time.Hour, true},
	}
	for _, c := range cases {
		m, w := deployedOn()
		first := t0.Add(time.Minute)
		w.Corrections = []time.Time{first, first.Add(10 * time.Minute), first.Add(20 * time.Minute)}
		w, _ = observe(t, m, w, Reading{State: sOff, At: first.Add(c.fourth - time.Minute)}, cfg)
		w, d := observe(t, m, w, Reading{State: sOff, At: first.Add(c.fourth)}, cfg)
		if got := d.Correct == PowerUp; got != c.correct {
			t.Errorf("fourth drift %s after the first: corrected %v, want %v (%+v)", c.fourth, got, c.correct, d)
		}
		if c.correct && !w.GuardTripped.IsZero() {
			t.Errorf("guard tripped although a correction was queued")
		}
		if !c.correct && w.GuardTripped.IsZero() {
			t.Errorf("guard did not trip")
		}
		for _, ct := range w.Corrections {
			if first.Add(c.fourth).Sub(ct) >= cfg.GuardWindow {
				t.Errorf("correction at %v kept past the window", ct)
			}
		}
	}
}

func TestGuardConfig(t *testing.T) {
	cfg := DefaultDriftConfig()
	cfg.GuardMax, cfg.GuardWindow = 1, 10*time.Minute
	m, w := deployedOn()
	w, d := flap(t, m, w, cfg, t0, true)
	if d.Correct != PowerUp {
		t.Fatalf("first: %+v", d)
	}
	w, d = flap(t, m, w, cfg, t0.Add(5*time.Minute), true)
	if d.Correct != PowerNone || w.GuardTripped.IsZero() || !strings.Contains(d.Events[len(d.Events)-1].Description, "1 corrections in the last 10m0s") {
		t.Fatalf("second: %+v", d)
	}
	// Zero values mean the defaults.
	if got := (DriftConfig{}).withDefaults(); got != DefaultDriftConfig() {
		t.Errorf("zero config: %+v, want %+v", got, DefaultDriftConfig())
	}
}

func TestEnforceOff(t *testing.T) {
	// The owner switched the machine off through Anvil; someone powers it
	// on at the front panel. Enforce switches it off again.
	m := driftMachine(Deployed)
	w := PowerWatch{Observed: sOff, LastAsk: PowerAsk{Action: PowerDown, By: AskedByUser, Status: Deployed, At: t0}}
	cfg := DefaultDriftConfig()
	w, _ = observe(t, m, w, Reading{State: sOn, At: t0.Add(time.Hour)}, cfg)
	w, d := observe(t, m, w, Reading{State: sOn, At: t0.Add(time.Hour + time.Minute)}, cfg)
	if d.Correct != PowerDown || !w.Drift || w.Expected != sOff {
		t.Fatalf("%+v / %+v", d, w)
	}
	if !strings.Contains(d.Events[len(d.Events)-1].Description, "powering it off") {
		t.Errorf("event %q", d.Events[len(d.Events)-1].Description)
	}
	// The same holds in a status without a lifecycle expectation, when a
	// user asked explicitly.
	m = driftMachine(Ready)
	w = PowerWatch{Observed: sOn, LastAsk: PowerAsk{Action: PowerUp, By: AskedByUser, Status: Ready, At: t0}}
	w, _ = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Hour)}, cfg)
	_, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Hour + time.Minute)}, cfg)
	if d.Correct != PowerUp {
		t.Fatalf("ready, asked on: %+v", d)
	}
}

func TestWarnPolicy(t *testing.T) {
	for _, policy := range []DriftPolicy{Warn, "bogus"} { // an unknown policy never acts
		t.Run(string(policy), func(t *testing.T) {
			cfg := DefaultDriftConfig()
			cfg.Policy = policy
			m, w := deployedOn()
			w, _ = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Minute)}, cfg)
			w, d := observe(t, m, w, Reading{State: sOff, At: t0.Add(2 * time.Minute)}, cfg)
			if d.Correct != PowerNone || !d.Flag || !w.Drift {
				t.Fatalf("drift start: %+v / %+v", d, w)
			}
			if got, want := eventTypes(d.Events), []string{"Power state", "Power drift"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
			if d.Events[1].Level != LevelWarning || !strings.Contains(d.Events[1].Description, "only warns") {
				t.Errorf("warning: %+v", d.Events[1])
			}
			for i := 3; i < 30; i++ { // no event spam
				w, d = observe(t, m, w, Reading{State: sOff, At: t0.Add(time.Duration(i) * time.Minute)}, cfg)
				if d.Correct != PowerNone || !d.Flag || len(d.Events) != 0 || !w.DriftSince.Equal(t0.Add(2*time.Minute)) {
					t.Fatalf("reading %d: %+v / %+v", i, d, w)
				}
			}
			if len(w.Corrections) != 0 {
				t.Errorf("warn counted corrections: %v", w.Corrections)
			}
			w, _ = observe(t, m, w, Reading{State: sOn, At: t0.Add(40 * time.Minute)}, cfg)
			w, d = observe(t, m, w, Reading{State: sOn, At: t0.Add(41 * time.Minute)}, cfg)
			if w.Drift || d.Flag || w.Reason != "" {
				t.Fatalf("cleared: %+v / %+v", d, w)
			}
			if got, want := eventTypes(d.Events), []string{"Power state", "Power drift cleared"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("events %q, want %q", got, want)
			}
			if d.Events[1].Level != LevelInfo {
				t.Errorf("cleared event level %s", d.Events[1].Level)
			}
		})
	}
}

func TestManagedPhases(t *testing.T) {
	phases := []struct {
		status   Status
		expected PowerState
	}{
		{Commissioning, sOn}, {Deploying, sOn}, {Releasing, sOff}, {DiskErasing, sOn},
		{EnteringRescueMode, sOn}, {ExitingRescueMode, sOn}, {Testing, sOn},
	}
	var covered []Status
	for _, p := range phases {
		covered = append(covered, p.status)
		wrong := sOff
		if p.expected == sOff {
			wrong = sOn
		}
		for _, policy := range []DriftPolicy{Enforce, Warn} {
			t.Run(p.status.String()+"/"+string(policy), func(t *testing.T) {
				cfg := DefaultDriftConfig()
				cfg.Policy = policy
				m := driftMachine(p.status)
				m.StatusExpires = tNow.Add(time.Hour)
				// The phase started with a power ask at t0.
				w := PowerWatch{Observed: p.expected,
					LastAsk: PowerAsk{Action: PowerRestart, By: AskedByLifecycle, Status: p.status, At: t0}}
				if p.expected == sOff {
					w.LastAsk.Action = PowerDown
				}
				// The BMC lags: within grace, nothing.
				w, d := observe(t, m, w, Reading{State: wrong, At: t0.Add(30 * time.Second)}, cfg)
				w, d = observe(t, m, w, Reading{State: wrong, At: t0.Add(60 * time.Second)}, cfg)
				if d.FailPhase != "" || w.Drift {
					t.Fatalf("within grace: %+v", d)
				}
				// Still wrong after the grace: fail the phase.
				w, d = observe(t, m, w, Reading{State: wrong, At: t0.Add(3 * time.Minute)}, cfg)
				want := fmt.Sprintf("power drift: the machine is %s while %s; expected %s", wrong, p.status, p.expected)
				if d.FailPhase != want || d.Correct != PowerNone || d.Flag || len(d.Events) != 0 || !w.Drift {
					t.Fatalf("got %+v\nwant FailPhase %q", d, want)
				}
				// The lifecycle fails the phase with the reason.
				out := ApplyDrift(m, d, t0.Add(3*time.Minute), DefaultConfig())
				twin, _ := p.status.FailedTwin()
				if out.Machine.Status != twin || out.Power != PowerNone {
					t.Fatalf("ApplyDrift: status %s power %q, want %s", out.Machine.Status, out.Power, twin)
				}
				last := out.Events[len(out.Events)-1]
				if last.Level != LevelError || !strings.Contains(last.Description, want) {
					t.Errorf("failure event: %+v", last)
				}
				// In the failed status there is no expectation: the drift
				// ends quietly.
				w, d = observe(t, out.Machine, w, Reading{State: wrong, At: t0.Add(4 * time.Minute)}, cfg)
				if w.Drift || w.Expected != "" || len(d.Events) != 0 || d.FailPhase != "" {
					t.Errorf("after failing: %+v / %+v", d, w)
				}
			})
		}
	}
	for _, s := range AllStatuses {
		if s.InProgress() != slices.Contains(covered, s) {
			t.Errorf("%s: in progress %v, covered %v", s, s.InProgress(), slices.Contains(covered, s))
		}
	}
}

func TestManagedPhaseRepeatsFailPhaseUntilApplied(t *testing.T) {
	m := driftMachine(Deploying)
	w := PowerWatch{Observed: sOn}
	cfg := DefaultDriftConfig()
	w, _ = observe(t, m, w, Reading{State: sOff, At: tNow}, cfg)
	for i := 1; i < 4; i++ {
		var d DriftDecision
		w, d = observe(t, m, w, Reading{State: sOff, At: tNow.Add(time.Duration(i) * time.Minute)}, cfg)
		if d.FailPhase == "" {
			t.Fatalf("reading %d: no FailPhase", i)
		}
	}
	// A stale decision on a machine that has since left the phase does
	// nothing but record its events.
	d := DriftDecision{FailPhase: "power drift: stale"}
	out := ApplyDrift(driftMachine(Deployed), d, tNow, DefaultConfig())
	if out.Machine.Status != Deployed || len(out.Events) != 0 || !out.Machine.Updated.Equal(t0) {
		t.Errorf("stale FailPhase: %+v", out)
	}
}

func TestRescueModeOnlyWarns(t *testing.T) {
	for _, policy := range []DriftPolicy{Enforce, Warn} {
		m := driftMachine(RescueMode)
		w := PowerWatch{Observed: sOn}
		cfg := DefaultDriftConfig()
		cfg.Policy = policy
		w, _ = observe(t, m, w, Reading{State: sOff, At: tNow}, cfg)
		w, d := observe(t, m, w, Reading{State: sOff, At: tNow.Add(time.Minute)}, cfg)
		if d.Correct != PowerNone || d.FailPhase != "" || !d.Flag || !w.Drift ||
			!slices.Contains(eventTypes(d.Events), "Power drift") || !strings.Contains(w.Reason, "rescue mode") {
			t.Errorf("%s: %+v / %+v", policy, d, w)
		}
		_, d = observe(t, m, w, Reading{State: sOff, At: tNow.Add(2 * time.Minute)}, cfg)
		if len(d.Events) != 0 || !d.Flag {
			t.Errorf("%s persistent: %+v", policy, d)
		}
	}
}

func TestNoExpectationNeverDrifts(t *testing.T) {
	for _, s := range AllStatuses {
		if expectedPowerTable[s][0] != sNone {
			continue
		}
		m := driftMachine(s)
		w := PowerWatch{Observed: sOn}
		for i, st := range []PowerState{sOff, sOff, sOn, sOn, sOff, sOff} {
			var d DriftDecision
			w, d = observe(t, m, w, Reading{State: st, At: tNow.Add(time.Duration(i) * time.Minute)}, DefaultDriftConfig())
			if w.Drift || d.Correct != PowerNone || d.FailPhase != "" || d.Flag {
				t.Fatalf("%s drifted: %+v", s, d)
			}
		}
	}
}

func TestFailedReadingDuringDrift(t *testing.T) {
	m, w := deployedOn()
	cfg := DefaultDriftConfig()
	cfg.Policy = Warn
	w, _ = observe(t, m, w, Reading{State: sOff, At: tNow}, cfg)
	w, _ = observe(t, m, w, Reading{State: sOff, At: tNow.Add(time.Minute)}, cfg)
	before := deepCopyWatch(w)
	w, d := observe(t, m, w, Reading{Err: errors.New("timeout"), At: tNow.Add(2 * time.Minute)}, cfg)
	if !w.Drift || !w.DriftSince.Equal(before.DriftSince) || w.Reason != before.Reason || d.Flag || len(d.Events) != 0 {
		t.Errorf("a failed reading changed the drift: %+v / %+v", d, w)
	}
}

func TestObserveDoesNotMutate(t *testing.T) {
	// Every path, with a watch that has a Corrections slice with spare
	// capacity (an append could scribble into the caller's array).
	corr := make([]time.Time, 2, 8)
	corr[0], corr[1] = tNow.Add(-30*time.Minute), tNow.Add(-20*time.Minute)
	base := PowerWatch{Observed: sOn, Candidate: sOff, Corrections: corr}
	for _, s := range AllStatuses {
		for _, st := range []PowerState{sOn, sOff, PowerError} {
			for _, policy := range []DriftPolicy{Enforce, Warn} {
				cfg := DefaultDriftConfig()
				cfg.Policy = policy
				observe(t, driftMachine(s), base, Reading{State: st, At: tNow}, cfg)
				observe(t, driftMachine(s), ResetGuard(base), Reading{State: st, At: tNow}, cfg)
			}
		}
	}
	if !reflect.DeepEqual(corr[:cap(corr)][2:], make([]time.Time, 6)) {
		t.Errorf("the spare capacity of the input's Corrections was written to")
	}
}

func TestApplyDriftCorrection(t *testing.T) {
	m, w := deployedOn()
	w, _ = observe(t, m, w, Reading{State: sOff, At: tNow}, DefaultDriftConfig())
	_, d := observe(t, m, w, Reading{State: sOff, At: tNow.Add(time.Minute)}, DefaultDriftConfig())
	snap := deepCopy(m)
	out := ApplyDrift(m, d, tNow.Add(time.Minute), DefaultConfig())
	if !reflect.DeepEqual(m, snap) {
		t.Fatalf("ApplyDrift mutated the machine")
	}
	if out.Power != PowerUp || out.Machine.Status != Deployed || !reflect.DeepEqual(out.Events, d.Events) ||
		!out.Machine.Updated.Equal(tNow.Add(time.Minute)) {
		t.Errorf("ApplyDrift: %+v", out)
	}
	checkNoAliasing(t, m, out.Machine)
	// Nothing decided: nothing changes.
	if out := ApplyDrift(m, DriftDecision{}, tNow, DefaultConfig()); !reflect.DeepEqual(out.Machine, m) || out.Power != PowerNone || len(out.Events) != 0 {
		t.Errorf("empty decision: %+v", out)
	}
}

func TestPowerWatchJSON(t *testing.T) {
	w := PowerWatch{
		Observed: sOff, Candidate: sOn, Expected: sOn,
		LastAsk: PowerAsk{Action: PowerDown, By: AskedByUser, Status: Deployed, At: t0},
		Drift:   true, DriftSince: t0, Reason: "power drift: ...",
		Corrections:  []time.Time{t0, tNow},
		GuardTripped: tNow, Failures: 2, ReadError: "timeout", ReadAt: tNow,
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var got PowerWatch
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("round trip:\n got %+v\nwant %+v\njson %s", got, w, b)
	}
	for _, key := range []string{`"observed":"off"`, `"last_ask":{"action":"off","by":"user","status":6,`, `"drift":true`, `"guard_tripped":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	if b, _ := json.Marshal(PowerWatch{}); string(b) != "{}" {
		t.Errorf("empty watch marshals to %s", b)
	}
}

func TestNegativeGraceMeansNone(t *testing.T) {
	cfg := DefaultDriftConfig()
	cfg.Grace = -1
	m, w := deployedOn()
	w = NoteAsked(w, PowerAsk{Action: PowerUp, By: AskedByUser, Status: Deployed, At: tNow})
	w, _ = observe(t, m, w, Reading{State: sOff, At: tNow.Add(time.Second)}, cfg)
	if _, d := observe(t, m, w, Reading{State: sOff, At: tNow.Add(2 * time.Second)}, cfg); d.Correct != PowerUp {
		t.Errorf("no grace: %+v", d)
	}
}

// TestConfirmedCommandEndsDrift: the correction's own verified "on" is a
// confirmed state, so the next poll sees the drift over at once and no poll
// that follows can count the loss twice.
func TestConfirmedCommandEndsDrift(t *testing.T) {
	m, w := deployedOn()
	cfg := DefaultDriftConfig()
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	w, _ = observe(t, m, w, Reading{State: sOff, At: at(1)}, cfg)
	w, d := observe(t, m, w, Reading{State: sOff, At: at(2)}, cfg)
	if d.Correct != PowerUp {
		t.Fatalf("no correction: %+v", d)
	}
	m.Watch = w
	out := ApplyPower(m, PowerReport{Action: PowerUp, State: sOn, Now: at(2).Add(10 * time.Second)}, Config{})
	if out.Machine.Watch.Observed != sOn || out.Machine.Watch.Candidate != "" {
		t.Fatalf("verified power on not taken as observed: %+v", out.Machine.Watch)
	}
	w, d = observe(t, m, out.Machine.Watch, Reading{State: sOn, At: at(7)}, cfg)
	if d.Correct != PowerNone || w.Drift || len(w.Corrections) != 1 {
		t.Fatalf("after the verified correction: %+v / %+v", d, w)
	}
	if got, want := eventTypes(d.Events), []string{"Power drift cleared"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	// A failed command or a query confirms nothing.
	for _, r := range []PowerReport{
		{Action: PowerUp, State: sOn, Err: errors.New("timeout"), Now: at(8)},
		{Action: "query", State: sOn, Now: at(8)},
		{Action: PowerUp, State: PowerUnknown, Now: at(8)},
	} {
		m.Watch = PowerWatch{Observed: sOff}
		if got := ApplyPower(m, r, Config{}).Machine.Watch.Observed; got != sOff {
			t.Errorf("%+v: observed %s, want off", r, got)
		}
	}
}
